r"""Count sketches for single- and multi-round federated frequency estimation.

This module implements Wu et al. 2023 (Wu, Kairouz, Zhu & Braverman, *Private Federated
Frequency Estimation: Adapting to the Hardness of the Instance*):

* seeded hash families (polynomials modulo the Mersenne prime :math:`p = 2^{31}-1`,
  :math:`k`-wise independent), shared by clients and server;
* the client encoding of Algorithm 1 (an :math:`L\times W` signed one-hot matrix), its
  secure sum through :mod:`fedfreq.secagg`, and a fast path that uses the linearity of
  the sketch (the sum of the clients' encodings is the sketch of their histogram);
* the three multi-round designs of Section 3: ``"shared"`` (one set of hashes for every
  round), ``"fresh"`` (independent hashes per round, decode per round, average) and
  ``"hybrid"`` (Algorithm 2: shared bucket hashes, fresh sign hashes, average over
  rounds then median over rows);
* the instance-dependent bounds (Proposition 2.1, Theorems 3.1 and 3.2), the width rules
  (Eq. 2 "oracle", Eq. 3 "minimax") and the two-phase method;
* the differentially private hybrid sketch of Theorem 4.1, with its noise calibrated
  and accounted for by :mod:`fedfreq.accounting`;
* the synthetic instances used by the paper's experiments (the exercise checkers are in
  :mod:`fedfreq.exercises`).

Items are 0-based: the domain :math:`[d]` of the paper is ``{0, ..., d-1}`` here.

The submodules, one idea each:

* ``fedfreq.sketch.hashing``: hash families;
* ``fedfreq.sketch.coding``: encoding, secure sum, decoding;
* ``fedfreq.sketch.widths``: error bounds and width rules;
* ``fedfreq.sketch.private``: the private hybrid sketch;
* ``fedfreq.sketch.peers``: comparison with other sketches;
* ``fedfreq.sketch.montecarlo``: many hash draws at once (identical rounds, in parallel);
* ``fedfreq.sketch.instances``: synthetic instances.

Every public name is importable from ``fedfreq.sketch`` itself.
"""

from __future__ import annotations

from .coding import (
    decode_sketches,
    encode_items,
    one_hot_bits_per_client,
    secure_sketch_sum,
    sketch_bits_per_client,
    sketch_estimate,
    sketch_estimate_clients,
    sketch_items,
    sketch_vector,
)
from .hashing import (
    DESIGNS,
    MAX_DOMAIN,
    MAX_ROUNDS,
    MAX_ROWS,
    MERSENNE_PRIME,
    HashTables,
    SketchHashes,
    draw_sketch_hashes,
    polynomial_hash,
)
from .instances import (
    flat_frequencies,
    geometric_frequencies,
    log_zipf_frequencies,
    round_frequencies,
    sample_client_items,
    split_rounds,
    zipf_frequencies,
)
from .montecarlo import identical_rounds_errors
from .peers import (
    PEER_SKETCHES,
    PeerSketchResult,
    compare_peer_sketches,
)
from .private import (
    dp_hybrid_sketch_estimate,
    dp_sketch_epsilon,
    dp_sketch_sigma,
    paper_dp_sigma,
    sketch_sensitivity,
)
from .widths import (
    TwoPhaseResult,
    fit_polynomial,
    fresh_sketch_bound,
    heterogeneity_vector,
    minimax_width,
    minton_price_bound,
    oracle_width,
    polynomial_frequencies,
    tail_energy,
    two_phase_width,
    width_objective,
)

__all__ = [
    "MAX_ROWS",
    "MAX_ROUNDS",
    "MAX_DOMAIN",
    "MERSENNE_PRIME",
    "DESIGNS",
    "SketchHashes",
    "HashTables",
    "polynomial_hash",
    "draw_sketch_hashes",
    "encode_items",
    "sketch_vector",
    "sketch_items",
    "secure_sketch_sum",
    "decode_sketches",
    "sketch_estimate",
    "sketch_estimate_clients",
    "identical_rounds_errors",
    "heterogeneity_vector",
    "tail_energy",
    "minton_price_bound",
    "fresh_sketch_bound",
    "width_objective",
    "oracle_width",
    "minimax_width",
    "polynomial_frequencies",
    "fit_polynomial",
    "TwoPhaseResult",
    "two_phase_width",
    "sketch_sensitivity",
    "dp_sketch_sigma",
    "dp_sketch_epsilon",
    "paper_dp_sigma",
    "dp_hybrid_sketch_estimate",
    "sketch_bits_per_client",
    "one_hot_bits_per_client",
    "PEER_SKETCHES",
    "PeerSketchResult",
    "compare_peer_sketches",
    "zipf_frequencies",
    "geometric_frequencies",
    "log_zipf_frequencies",
    "flat_frequencies",
    "sample_client_items",
    "split_rounds",
    "round_frequencies",
]
