(set-logic QF_LRA)
(assert (let (($x6 (and (distinct 0.0 0.0) true))) (or $x6)))
(check-sat)
