"""One configuration path (issue 25): only the front's resolver reads the
engine's environment variable, and no module passes the strategy through
the environment.

Read statically (no import), as tests/test_layers.py reads imports:
- the string "ESTIMATOR_COMPAT_ENGINE" and the name of the resolver's
  constant (ENGINE_ENV) appear in front/configuration.py only;
- no module names a strategy environment variable or `to_environment` /
  `from_environment` (the old channel between modules);
- no module reads `engine` or `engine_chosen` of a RunConfig (`config.engine`,
  `setup.config.engine_chosen`): they read `setup.choices`; RunConfig's own
  properties, for users, are the exception.
A test plants each fault in a tiny package and checks the scan catches it.
"""

import ast
import pathlib
from typing import Dict, List

import pytest

from estimator_compat.front import configuration

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESOLVER = "estimator_compat/front/configuration.py"
ENGINE_VARIABLE = "ESTIMATOR_COMPAT_ENGINE"
STRATEGY_VARIABLES = ("ESTIMATOR_COMPAT_STRATEGY",
                      "ESTIMATOR_COMPAT_MIN_SHARD_BYTES",
                      "ESTIMATOR_COMPAT_MAX_SHARDS")
CHANNEL_NAMES = ("to_environment", "from_environment")
CONFIG_NAMES = ("config", "_config")
# Modules that may also name the engine's variable, and why.
ALLOWED: Dict[str, str] = {
    RESOLVER: "the resolver",
    # RunConfig's public `engine` / `engine_chosen` call the resolver.
    "estimator_compat/run_config.py": "RunConfig's properties",
    # Sets it in the environment of a child process it starts: the one
    # process boundary where the environment is the channel.
    "migration/run_both_sides.py": "a child process's environment",
}


def _reads_config_engine(node: ast.Attribute) -> bool:
  if node.attr not in ("engine", "engine_chosen"):
    return False
  owner = node.value
  name = owner.id if isinstance(owner, ast.Name) else (
      owner.attr if isinstance(owner, ast.Attribute) else None)
  return name in CONFIG_NAMES


def faults(path: pathlib.Path, rel: str) -> List[str]:
  """What in one module breaks the single configuration path."""
  tree = ast.parse(path.read_text(), filename=str(path))
  found = []
  allowed = rel in ALLOWED
  for node in ast.walk(tree):
    where = f"{rel}:{getattr(node, 'lineno', '?')}"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
      if node.value == ENGINE_VARIABLE and not allowed:
        found.append(f"{where}: names ${ENGINE_VARIABLE}")
      if node.value in STRATEGY_VARIABLES:
        found.append(f"{where}: names ${node.value}")
    elif isinstance(node, ast.Name) and node.id == "ENGINE_ENV" and (
        rel != RESOLVER):
      found.append(f"{where}: uses the resolver's ENGINE_ENV")
    elif isinstance(node, ast.Attribute):
      if node.attr == "ENGINE_ENV" and rel != RESOLVER:
        found.append(f"{where}: uses the resolver's ENGINE_ENV")
      if node.attr in CHANNEL_NAMES:
        found.append(f"{where}: {node.attr} (the environment as a channel)")
      if _reads_config_engine(node) and not allowed:
        found.append(f"{where}: reads RunConfig.{node.attr}; read "
                     "setup.choices instead")
    elif isinstance(node, ast.alias) and node.name == "ENGINE_ENV" and (
        rel != RESOLVER):
      found.append(f"{where}: imports the resolver's ENGINE_ENV")
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
        node.name in CHANNEL_NAMES):
      found.append(f"{where}: defines {node.name}")
  return found


def scan(root: pathlib.Path, folders=("estimator_compat", "migration")
        ) -> List[str]:
  """Every fault in the modules of `folders` under `root`."""
  found = []
  for folder in folders:
    for path in sorted((root / folder).rglob("*.py")):
      found += faults(path, path.relative_to(root).as_posix())
  return found


def test_only_the_resolver_reads_the_engine_and_strategy_inputs():
  assert scan(ROOT) == []


def test_the_resolver_is_where_the_scan_expects_it():
  assert (ROOT / RESOLVER).exists()
  assert configuration.ENGINE_ENV == ENGINE_VARIABLE
  assert ENGINE_VARIABLE in (ROOT / RESOLVER).read_text()


@pytest.mark.parametrize("source, expected", [
    ("import os\nname = os.environ.get('ESTIMATOR_COMPAT_ENGINE')\n",
     "names $ESTIMATOR_COMPAT_ENGINE"),
    ("import os\nfrom estimator_compat.front.configuration import ENGINE_ENV"
     "\nname = os.environ[ENGINE_ENV]\n", "ENGINE_ENV"),
    ("import os\nfrom estimator_compat.front import configuration\n"
     "name = os.getenv(configuration.ENGINE_ENV)\n", "ENGINE_ENV"),
    ("import os\nos.environ['ESTIMATOR_COMPAT_STRATEGY'] = 'mirrored'\n",
     "names $ESTIMATOR_COMPAT_STRATEGY"),
    ("def f(choice):\n  choice.to_environment()\n", "to_environment"),
    ("def f(setup):\n  return setup.config.engine == 'graph'\n",
     "reads RunConfig.engine"),
    ("def f(config):\n  return config.engine_chosen\n",
     "reads RunConfig.engine_chosen"),
])
def test_a_planted_read_is_caught(tmp_path, source, expected):
  package = tmp_path / "estimator_compat"
  (package / "engines").mkdir(parents=True)
  (package / "engines" / "clean.py").write_text(
      "def f(setup):\n  return setup.choices.engine == 'graph'\n")
  assert scan(tmp_path) == []
  (package / "engines" / "planted.py").write_text(source)
  found = scan(tmp_path)
  assert found and any(expected in fault for fault in found), found
  assert all(fault.startswith("estimator_compat/engines/planted.py:")
             for fault in found), found


def test_resolve_reads_runconfig_then_the_environment(monkeypatch):
  # pylint: disable=g-import-not-at-top
  import dataclasses
  import estimator_compat as tfe
  monkeypatch.delenv(ENGINE_VARIABLE, raising=False)
  choices = configuration.resolve(tfe.RunConfig())
  assert (choices.engine, choices.engine_chosen) == ("function", False)
  with pytest.raises(dataclasses.FrozenInstanceError):
    choices.engine = "graph"
  monkeypatch.setenv(ENGINE_VARIABLE, "graph")
  assert configuration.resolve(tfe.RunConfig()).graph_chosen
  chosen = configuration.resolve(tfe.RunConfig(engine="function"))
  assert (chosen.engine, chosen.engine_chosen) == ("function", True)


def test_a_converted_tf1_strategy_is_not_cached_inside_runconfig():
  # pylint: disable=g-import-not-at-top
  import copy
  import tensorflow as tf
  import estimator_compat as tfe
  from estimator_compat.distribute import strategies
  v1 = tf.compat.v1.distribute.OneDeviceStrategy("/cpu:0")
  config = tfe.RunConfig(train_distribute=v1)
  fields = set(vars(config))
  converted = strategies.for_training(config, configuration.StrategyChoice())
  assert isinstance(converted, tf.distribute.OneDeviceStrategy)
  assert set(vars(config)) == fields
  # Built once per strategy object: copies and later calls share it.
  assert strategies.for_training(copy.deepcopy(config),
                                 configuration.StrategyChoice()) is converted
  assert strategies.for_training(config.replace(save_summary_steps=7),
                                 configuration.StrategyChoice()) is converted
