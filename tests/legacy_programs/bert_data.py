"""A tiny vocabulary, BERT config and CoLA-format data set for run_classifier.

  python tests/legacy_programs/bert_data.py DIR

writes DIR/vocab.txt, DIR/bert_config.json and DIR/data/{train,dev,test}.tsv:
sentences of the vocabulary's words, label 1 when "good" is among them and
0 when "bad" is (numpy and the standard library only, so both TensorFlows
run it).
"""

import json
import os
import sys

import numpy as np

WORDS = ["the", "a", "movie", "film", "was", "is", "very", "quite", "plot",
         "actors", "music", "story", "and", "but", "good", "bad"]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BERT_CONFIG = {
    "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1, "hidden_size": 16, "initializer_range": 0.02,
    "intermediate_size": 32, "max_position_embeddings": 32,
    "num_attention_heads": 2, "num_hidden_layers": 2, "type_vocab_size": 2,
    "vocab_size": len(SPECIAL) + len(WORDS)}
ROWS = {"train": 64, "dev": 24, "test": 10}


def _sentences(rows, rng):
  filler = WORDS[:-2]
  out = []
  for i in range(rows):
    label = i % 2
    words = list(rng.choice(filler, size=rng.randint(3, 7)))
    words.insert(rng.randint(0, len(words) + 1), "good" if label else "bad")
    out.append((label, " ".join(words)))
  return out


def run_classifier_args(directory: str) -> list:
  """run_classifier.py's flags for the data `write(directory)` wrote."""
  return [
      "--task_name=cola", "--do_train=true", "--do_eval=true",
      "--do_predict=true", f"--data_dir={directory}/data",
      f"--vocab_file={directory}/vocab.txt",
      f"--bert_config_file={directory}/bert_config.json",
      "--max_seq_length=16", "--train_batch_size=8", "--eval_batch_size=8",
      "--predict_batch_size=4", "--learning_rate=5e-3",
      "--num_train_epochs=4", "--save_checkpoints_steps=16",
      "--iterations_per_loop=8", "--use_tpu=False"]


def write(directory: str) -> None:
  rng = np.random.RandomState(0)
  data_dir = os.path.join(directory, "data")
  os.makedirs(data_dir, exist_ok=True)
  with open(os.path.join(directory, "vocab.txt"), "w") as f:
    f.write("\n".join(SPECIAL + WORDS) + "\n")
  with open(os.path.join(directory, "bert_config.json"), "w") as f:
    json.dump(BERT_CONFIG, f)
  for split in ("train", "dev"):
    with open(os.path.join(data_dir, f"{split}.tsv"), "w") as f:
      for i, (label, text) in enumerate(_sentences(ROWS[split], rng)):
        f.write(f"s{i}\t{label}\t*\t{text}\n")
  with open(os.path.join(data_dir, "test.tsv"), "w") as f:
    f.write("index\tsentence\n")
    for i, (_, text) in enumerate(_sentences(ROWS["test"], rng)):
      f.write(f"{i}\t{text}\n")


if __name__ == "__main__":
  write(sys.argv[1])
