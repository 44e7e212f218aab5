(set-logic QF_LIRA)
(assert (let (($x10 (and (distinct (- (/ 1.0 2.0)) (+ (- (/ 1.0 2.0)) (to_real 0))) true))) (or $x10)))
(check-sat)
