"""The distribution flags install() takes off a legacy program's command line
(distribute/flags.py): parsed, removed from argv, handed to the front as a
value (front/configuration.py); --local_cluster hands the process to the
launcher; a serving task exits."""

import pytest
from absl import flags as absl_flags

from estimator_compat.distribute import cluster_tasks
from estimator_compat.distribute import flags
from estimator_compat.front import configuration


@pytest.fixture(autouse=True)
def clean_choice(monkeypatch):
  configuration.set_strategy_flags(configuration.StrategyChoice())
  monkeypatch.delenv(cluster_tasks.DONE_FILE_ENV, raising=False)
  yield
  flags._FLAGS.unparse_flags()  # pylint: disable=protected-access
  configuration.set_strategy_flags(configuration.StrategyChoice())


def test_our_flags_leave_argv_and_reach_the_front():
  argv = ["prog.py", "--steps=3", "--strategy=mirrored", "--max_shards", "4",
          "data.csv", "--min_shard_bytes=1024"]
  flags.apply(argv)
  assert argv == ["prog.py", "--steps=3", "data.csv"]
  choice = configuration.strategy_flags()
  assert (choice.name, choice.min_shard_bytes, choice.max_shards) == (
      "mirrored", 1024, 4)


def test_without_our_flags_nothing_changes():
  argv = ["prog.py", "--strategy_name=x", "--other"]
  flags.apply(argv)
  assert argv == ["prog.py", "--strategy_name=x", "--other"]
  assert configuration.strategy_flags().name is None


def test_a_malformed_value_names_the_flag():
  with pytest.raises(absl_flags.Error, match="strategy"):
    flags.apply(["prog.py", "--strategy=sideways"])
  with pytest.raises(absl_flags.Error, match="max_shards"):
    flags.apply(["prog.py", "--max_shards=0"])


def test_local_cluster_hands_the_process_to_the_launcher(monkeypatch):
  from estimator_compat.distribute import local_cluster
  launched = []
  monkeypatch.setattr(local_cluster, "launch",
                      lambda spec, strategy: launched.append(
                          (spec, strategy)) or 3)
  with pytest.raises(SystemExit) as raised:
    flags.apply(["prog.py", "--local_cluster=worker:2,ps:1",
                 "--strategy=parameter_server"])
  assert raised.value.code == 3
  assert launched == [("worker:2,ps:1", "parameter_server")]


@pytest.mark.parametrize("gone, code", [(False, 0), (True, 1)])
def test_a_serving_task_serves_until_the_chief_is_done(monkeypatch, gone,
                                                       code):
  monkeypatch.setenv(cluster_tasks.DONE_FILE_ENV, "/tmp/done")
  monkeypatch.setattr(cluster_tasks, "serves_only",
                      lambda config, choices: True)

  def serve_until_done(config, choices, server):
    del config, choices, server
    if gone:
      raise cluster_tasks.ChiefGoneError("the chief is gone")

  monkeypatch.setattr(cluster_tasks, "serve_until_done", serve_until_done)
  with pytest.raises(SystemExit) as raised:
    flags.apply(["prog.py"])
  assert raised.value.code == code


def test_a_training_task_goes_on(monkeypatch):
  monkeypatch.setenv(cluster_tasks.DONE_FILE_ENV, "/tmp/done")
  monkeypatch.setattr(cluster_tasks, "serves_only",
                      lambda config, choices: False)
  flags.apply(["prog.py"])
