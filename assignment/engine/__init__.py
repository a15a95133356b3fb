"""The crowdsourcing maths of tvcs-assign, in numpy: no Django.

Problem definition, exact expected accuracy of the Bayes vote, the assignment methods
(stochastic IHT with the exact TVCS projection and the baselines), quality estimation from gold
questions and aggregation of collected answers.
"""
