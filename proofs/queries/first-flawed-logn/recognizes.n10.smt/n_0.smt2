(set-logic QF_UF)
(assert (and (distinct false false) true))
(check-sat)
