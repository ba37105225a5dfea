"""The `tensorflow.boosted_trees.TreeEnsemble` message, for reading trees.

TF 2.21 ships the BoostedTrees kernels but no Python module for their
protocol buffer (`boosted_trees.proto`; TF 2.15 had none either). The
ensemble resource saves itself as that message, serialized, under
`boosted_trees:0_serialized`; feature importances and tree inspection read
it. The schema is built here from its field numbers with protobuf's own
descriptor machinery; fields the readers do not use are kept as unknown
fields, so parsing never loses data.
"""

from google.protobuf import descriptor_pb2
from google.protobuf import descriptor_pool
from google.protobuf import message_factory

PACKAGE = "tensorflow.boosted_trees"
_F = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED

# message name -> [(field, number, type, label, message type, oneof index)]
# and its oneofs.
_MESSAGES = {
    "Node": ([("leaf", 1, _F.TYPE_MESSAGE, _OPTIONAL, "Leaf", 0),
              ("bucketized_split", 2, _F.TYPE_MESSAGE, _OPTIONAL,
               "BucketizedSplit", 0),
              ("categorical_split", 3, _F.TYPE_MESSAGE, _OPTIONAL,
               "CategoricalSplit", 0),
              ("dense_split", 4, _F.TYPE_MESSAGE, _OPTIONAL, "DenseSplit", 0),
              ("metadata", 777, _F.TYPE_MESSAGE, _OPTIONAL, "NodeMetadata",
               None)], ["node"]),
    "NodeMetadata": ([("gain", 1, _F.TYPE_FLOAT, _OPTIONAL, None, None),
                      ("original_leaf", 2, _F.TYPE_MESSAGE, _OPTIONAL, "Leaf",
                       None)], []),
    "Leaf": ([("vector", 1, _F.TYPE_MESSAGE, _OPTIONAL, "Vector", 0),
              ("sparse_vector", 2, _F.TYPE_MESSAGE, _OPTIONAL, "SparseVector",
               0),
              ("scalar", 3, _F.TYPE_FLOAT, _OPTIONAL, None, None)], ["leaf"]),
    "Vector": ([("value", 1, _F.TYPE_FLOAT, _REPEATED, None, None)], []),
    "SparseVector": ([("index", 1, _F.TYPE_INT32, _REPEATED, None, None),
                      ("value", 2, _F.TYPE_FLOAT, _REPEATED, None, None)], []),
    "BucketizedSplit": ([("feature_id", 1, _F.TYPE_INT32, _OPTIONAL, None,
                          None),
                         ("threshold", 2, _F.TYPE_INT32, _OPTIONAL, None, None),
                         ("dimension_id", 5, _F.TYPE_INT32, _OPTIONAL, None,
                          None),
                         ("default_direction", 6, _F.TYPE_INT32, _OPTIONAL,
                          None, None),
                         ("left_id", 3, _F.TYPE_INT32, _OPTIONAL, None, None),
                         ("right_id", 4, _F.TYPE_INT32, _OPTIONAL, None, None)],
                        []),
    "CategoricalSplit": ([("feature_id", 1, _F.TYPE_INT32, _OPTIONAL, None,
                           None),
                          ("value", 2, _F.TYPE_INT32, _OPTIONAL, None, None),
                          ("dimension_id", 5, _F.TYPE_INT32, _OPTIONAL, None,
                           None),
                          ("left_id", 3, _F.TYPE_INT32, _OPTIONAL, None, None),
                          ("right_id", 4, _F.TYPE_INT32, _OPTIONAL, None,
                           None)], []),
    "DenseSplit": ([("feature_id", 1, _F.TYPE_INT32, _OPTIONAL, None, None),
                    ("threshold", 2, _F.TYPE_FLOAT, _OPTIONAL, None, None),
                    ("left_id", 3, _F.TYPE_INT32, _OPTIONAL, None, None),
                    ("right_id", 4, _F.TYPE_INT32, _OPTIONAL, None, None)],
                   []),
    "Tree": ([("nodes", 1, _F.TYPE_MESSAGE, _REPEATED, "Node", None)], []),
    "TreeMetadata": ([("num_layers_grown", 2, _F.TYPE_INT32, _OPTIONAL, None,
                       None),
                      ("is_finalized", 3, _F.TYPE_BOOL, _OPTIONAL, None, None),
                      ("post_pruned_nodes_meta", 4, _F.TYPE_MESSAGE,
                       _REPEATED, "PostPruneNodeUpdate", None)], []),
    # TreeMetadata.PostPruneNodeUpdate in TF's file (the same wire format).
    "PostPruneNodeUpdate": ([("new_node_id", 1, _F.TYPE_INT32, _OPTIONAL,
                              None, None),
                             ("logit_change", 2, _F.TYPE_FLOAT, _REPEATED,
                              None, None)], []),
    "GrowingMetadata": ([("num_trees_attempted", 1, _F.TYPE_INT64, _OPTIONAL,
                          None, None),
                         ("num_layers_attempted", 2, _F.TYPE_INT64, _OPTIONAL,
                          None, None),
                         ("last_layer_node_start", 3, _F.TYPE_INT32,
                          _OPTIONAL, None, None),
                         ("last_layer_node_end", 4, _F.TYPE_INT32, _OPTIONAL,
                          None, None)], []),
    "TreeEnsemble": ([("trees", 1, _F.TYPE_MESSAGE, _REPEATED, "Tree", None),
                      ("tree_weights", 2, _F.TYPE_FLOAT, _REPEATED, None,
                       None),
                      ("tree_metadata", 3, _F.TYPE_MESSAGE, _REPEATED,
                       "TreeMetadata", None),
                      ("growing_metadata", 4, _F.TYPE_MESSAGE, _OPTIONAL,
                       "GrowingMetadata", None)], []),
    "DebugOutput": ([("feature_ids", 1, _F.TYPE_INT32, _REPEATED, None, None),
                     ("logits_path", 2, _F.TYPE_FLOAT, _REPEATED, None, None)],
                    []),
}


def file_descriptor() -> descriptor_pb2.FileDescriptorProto:
  """The schema as a FileDescriptorProto (also decode_proto's source)."""
  proto = descriptor_pb2.FileDescriptorProto(
      name="estimator_compat/boosted_trees.proto", package=PACKAGE,
      syntax="proto3")
  for name, (fields, oneofs) in _MESSAGES.items():
    message = proto.message_type.add(name=name)
    for oneof in oneofs:
      message.oneof_decl.add(name=oneof)
    for field, number, kind, label, type_name, oneof_index in fields:
      entry = message.field.add(name=field, number=number, type=kind,
                                label=label)
      if type_name:
        entry.type_name = f".{PACKAGE}.{type_name}"
      if oneof_index is not None:
        entry.oneof_index = oneof_index
  return proto


def _classes():
  pool = descriptor_pool.DescriptorPool()
  pool.Add(file_descriptor())
  return {name: message_factory.GetMessageClass(
      pool.FindMessageTypeByName(f"{PACKAGE}.{name}")) for name in _MESSAGES}


_CLASSES = _classes()
MESSAGE_NAMES = tuple(_MESSAGES)


def message_class(name: str):
  """The message class `name` (one of MESSAGE_NAMES)."""
  return _CLASSES[name]


TreeEnsemble = _CLASSES["TreeEnsemble"]
Tree = _CLASSES["Tree"]
Node = _CLASSES["Node"]
DebugOutput = _CLASSES["DebugOutput"]
