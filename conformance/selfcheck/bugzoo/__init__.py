"""The bug zoo: mutant reference controllers re-injecting historical Kafka controller bugs (and generic
mutations from a mutation-testing tool), and the check ladder that must catch each of them.

``historical.HISTORICAL`` is the catalogue; ``checks.hunt`` runs the checking stack against one mutant;
``zoo.run_zoo`` runs the baseline and every chosen mutant; ``generic`` makes and kills cosmic-ray mutants.
"""
