"""The least-squares solve of TF's multi-dimensional BoostedTrees leaves.

For logits of more than one dimension TF's split search solved
`(H + l2 I) w = -g` with Eigen's column-pivoting Householder QR in float32
(`colPivHouseholderQr().solve`). The softmax hessian is singular, so with
`l2 = 0` the answer is the QR's basic solution: columns whose remaining
norm falls under float32 epsilon (relative to the largest column) are
left out and their unknowns set to 0. This follows the same steps:
pivot on the largest remaining column norm (the first of equal ones),
Householder reflections, norm downdating, back substitution.
"""

import numpy as np

_F32 = np.float32
_EPS = np.finfo(np.float32).eps


def _norm(vector: np.ndarray) -> np.float32:
  total = _F32(0)
  for value in vector:
    total = _F32(total + _F32(value * value))
  return _F32(np.sqrt(total))


def _reflect(block: np.ndarray, essential: np.ndarray, tau) -> None:
  """Applies I - tau [1; essential] [1; essential]^T to `block` in place."""
  if not block.size or tau == 0:
    return
  if block.shape[0] == 1:
    block *= _F32(1 - tau)
    return
  bottom = block[1:]
  tmp = np.array([_F32(np.dot(essential, bottom[:, j]))
                  for j in range(block.shape[1])], _F32)
  tmp = (tmp + block[0]).astype(_F32)
  block[0] = (block[0] - _F32(tau) * tmp).astype(_F32)
  scaled = (_F32(tau) * essential).astype(_F32)
  bottom -= np.outer(scaled, tmp).astype(_F32)


def solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
  """x with matrix @ x ~= rhs, as Eigen's ColPivHouseholderQR gave it."""
  qr = np.array(matrix, _F32, copy=True)
  rows, cols = qr.shape
  size = min(rows, cols)
  direct = np.array([_norm(qr[:, k]) for k in range(cols)], _F32)
  updated = direct.copy()
  threshold = _F32(_F32(updated.max() * _EPS) ** 2 / _F32(rows))
  downdate_threshold = _F32(np.sqrt(_EPS))
  nonzero, taus, order = size, np.zeros(size, _F32), list(range(cols))
  for k in range(size):
    biggest = k + int(np.argmax(updated[k:]))
    if (nonzero == size
        and _F32(updated[biggest] ** 2) < _F32(threshold * (rows - k))):
      nonzero = k
    if biggest != k:
      qr[:, [k, biggest]] = qr[:, [biggest, k]]
      updated[[k, biggest]] = updated[[biggest, k]]
      direct[[k, biggest]] = direct[[biggest, k]]
      order[k], order[biggest] = order[biggest], order[k]
    head, tail = qr[k, k], qr[k + 1:, k]
    tail_norm = _F32(0)
    for value in tail:
      tail_norm = _F32(tail_norm + _F32(value * value))
    if tail_norm <= np.finfo(np.float32).tiny:
      taus[k], beta = 0, head
      qr[k + 1:, k] = 0
    else:
      beta = _F32(np.sqrt(_F32(_F32(head * head) + tail_norm)))
      if head >= 0:
        beta = -beta
      qr[k + 1:, k] = (tail / _F32(head - beta)).astype(_F32)
      taus[k] = _F32(_F32(beta - head) / beta)
    qr[k, k] = beta
    _reflect(qr[k:, k + 1:], qr[k + 1:, k], taus[k])
    for j in range(k + 1, cols):
      if updated[j] == 0:
        continue
      temp = _F32(abs(qr[k, j]) / updated[j])
      temp = _F32(_F32(1 + temp) * _F32(1 - temp))
      temp = max(temp, _F32(0))
      ratio = _F32(updated[j] / direct[j])
      if _F32(temp * _F32(ratio * ratio)) <= downdate_threshold:
        direct[j] = _norm(qr[k + 1:, j])
        updated[j] = direct[j]
      else:
        updated[j] = _F32(updated[j] * _F32(np.sqrt(temp)))
  solution = np.zeros(cols, _F32)
  if nonzero == 0:
    return solution
  c = np.array(rhs, _F32, copy=True).reshape(-1, 1)
  for k in range(nonzero):
    _reflect(c[k:], qr[k + 1:, k], taus[k])
  c = c[:, 0]
  for i in range(nonzero - 1, -1, -1):
    if c[i] != 0:
      c[i] = _F32(c[i] / qr[i, i])
      c[:i] = (c[:i] - c[i] * qr[:i, i]).astype(_F32)
  for i in range(nonzero):
    solution[order[i]] = c[i]
  return solution
