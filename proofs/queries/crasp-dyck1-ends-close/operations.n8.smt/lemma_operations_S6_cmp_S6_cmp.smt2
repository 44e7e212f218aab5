(set-logic QF_LIRA)
(declare-fun count3 () Int)
(assert (let ((?x42 (ite (> (+ (+ 0 (* 1 count3)) 0) 0) 1.0 0.0))) (let ((?x6 (to_real count3))) (let ((?x13 (+ ?x6 (- (/ 1.0 2.0))))) (let (($x22 (> ?x13 0.0))) (let ((?x23 (ite $x22 1.0 (- 1.0)))) (let ((?x28 (+ (* (/ 1.0 2.0) ?x23) (/ 1.0 2.0)))) (let (($x43 (and (distinct ?x28 ?x42) true))) (let ((?x26 (+ (* (/ 1.0 2.0) (ite (> (+ (* (- 1.0) ?x6) (- (/ 1.0 2.0))) 0.0) 1.0 (- 1.0))) (/ 1.0 2.0)))) (let (($x36 (and (distinct ?x26 (ite (> (+ (+ 0 (* (- 1) count3)) 0) 0) 1.0 0.0)) true))) (let (($x21 (= ?x13 0.0))) (let ((?x8 (* (- 1.0) ?x6))) (let ((?x10 (+ ?x8 (- (/ 1.0 2.0))))) (let (($x16 (= ?x10 0.0))) (or $x16 $x21 $x36 $x43)))))))))))))))
(check-sat)
