"""Active learning with the network as teacher: learners (L*, Kearns–Vazirani, L#), the
oracles and checks behind their answers, and the one driver that runs them all."""
