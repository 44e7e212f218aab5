(set-logic QF_LRA)
(assert (let (($x6 (and (distinct 1.0 1.0) true))) (or $x6)))
(check-sat)
