"""Distribution: strategy choice, cluster tasks and servers, the loopback
cluster, and the distribution flags.

  strategies.py     which tf.distribute strategy a train/evaluate call uses
  cluster_tasks.py  loopback cluster specs, servers, the chief's done mark
  local_cluster.py  --local_cluster: a program as a whole cluster on one host
  flags.py          --strategy / --local_cluster / partitioning flags
"""
