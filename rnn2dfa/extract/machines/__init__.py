"""Moore and Mealy machines from labellers (k-class classifiers and taggers).

Each method of the one registry (`extract.registry`) that takes labellers names its
function in `Method.machine`; `extract(labeller, method)` runs it and returns a
`MachineResult` (`result.py`). L* (`lstar.py`), exact search (`exact.py`), k-means and
partitions (`cluster.py`) share the honesty rules of DFA extraction: "finished" only when the
final check saw every output the network gives (rare ones searched for) and longer words.
"""

from rnn2dfa.extract.machines.result import MachineEvidence, MachineResult

__all__ = ["MachineEvidence", "MachineResult"]
