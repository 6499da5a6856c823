"""Issue 15, session 11: how the general-English channel is fused, swept on the dev sets only.

Each dev request is scored once into its parts: the shipped ranker's lexical + word-vector
score per tool (`general` = 0) with the confidence it vouches for, and the general table's
cosine of the request with every tool (z = standard deviations over the catalog's mean). The
variants then recombine those parts in numpy, so a grid of hundreds of settings takes minutes:

- (b) the gain's shape: linear over the floor (shipped: 6 × (z − 2)), a power, a softplus;
- (a) adaptive fusion: the general weight scaled per request by how weak the lexical evidence
  is (its top score, or the share of request words that are catalog terms);
- (c) query expansion: a request word the catalog does not know (optionally: that nothing
  else maps to a catalog term) scores the postings of its nearest catalog words by the general
  table, at `beta` × cosine, never vouched for (bench/expand_search.py is the same step in the
  ranker itself).

The general channel and the expansion vouch for nothing, so no-tool accuracy is the shipped
one in every variant. Objective as bench/tune_search.py (mean (R@5 + MRR) / 2 over devset,
bfcl_pool.dev, bfcl_simple.dev, metatool.dev); the BFCL paraphrases are shown beside it.
Holdout files are never read. Needs numpy (the bench extra).

    .venv/bin/python bench/fusion_sweep.py [--top 12]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tune_search import BENCH, dev_sets  # noqa: E402

from agent.search.catalog_file import load_catalog, load_queries  # noqa: E402
from agent.search.ranker import MAX_QUERY_WORDS, KeywordRanker, RankerParams  # noqa: E402
from agent.search.text import STOP_WORDS, stem, words  # noqa: E402
from agent.search.word_vectors import general_vectors  # noqa: E402

OBJECTIVE_SETS = ("devset", "bfcl_pool", "bfcl_simple", "metatool")
NEAREST = 8  # catalog words kept per unknown request word
Gain = Callable[..., Any]  # (z per tool, the request's parts) → gain per tool


def word_vector(word: str, rows: Any) -> Any:
    """The general table's unit vector of one lower-case word (mean of its tokens), or None."""
    table = general_vectors()
    assert table is not None
    ids = [table.index[piece] for piece in table.pieces(word)]
    if not ids:
        return None
    vector = rows[ids].sum(0).astype(float)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else None


def parts() -> dict[str, dict[str, Any]]:
    """Per dev set: tool names and, per request, the parts every variant recombines."""
    table = general_vectors()
    assert table is not None
    rows = np.frombuffer(table.rows, dtype=np.uint8).astype(np.int16).reshape(-1, table.dims)
    rows = rows - 128
    sets = dev_sets()
    paraphrase = BENCH / "data" / "bfcl_simple.paraphrase.queries.jsonl"
    if paraphrase.exists():
        catalog = load_catalog(BENCH / "data" / "bfcl_simple.catalog.json")
        sets.append(("bfcl_simple.paraphrase", catalog, load_queries(paraphrase)))
    found: dict[str, dict[str, Any]] = {}
    for name, docs, queries in sets:
        lexical = KeywordRanker(docs, dataclasses.replace(RankerParams(), general=0.0))
        general = KeywordRanker(docs)._general_vectors
        assert general is not None
        has = np.array(general._has_vector, bool)
        vocabulary = [w for w in lexical._surfaces if len(w) >= 3 and any(c.isalpha() for c in w)]
        vectors = [(w, word_vector(w, rows)) for w in vocabulary]
        vocabulary = [w for w, v in vectors if v is not None]
        matrix = np.stack([v for _, v in vectors if v is not None])
        count = len(docs)
        requests = []
        for item in queries:
            totals, confidence = lexical._ordered(item.query)
            score = np.zeros(count)
            score[list(totals)] = list(totals.values())
            matched = np.zeros(count, bool)
            matched[list(totals)] = True
            cosines = general.similarities(item.query.split()[: MAX_QUERY_WORDS * 4])
            z = None
            if cosines is not None:
                c = np.array(cosines)
                spread = c[has].std()
                z = np.where(has, (c - c[has].mean()) / spread if spread > 0 else 0.0, -99.0)
            content = {
                w
                for w in words(item.query)
                if w not in STOP_WORDS and not w.isdigit() and len(w) > 1
            }
            groups = lexical._query_groups(item.query)
            exact = sum(1 for group in groups if any(a.weight >= 1.0 for a in group))
            unknown = []
            for w in dict.fromkeys(words(item.query)):
                if w not in content or stem(w) in lexical._postings:
                    continue
                vector = word_vector(w, rows)
                if vector is None:
                    continue
                near = matrix @ vector
                candidates = []
                for i in np.argsort(-near)[:NEAREST]:
                    for term in lexical._surface_to_terms[vocabulary[i]]:
                        posting = np.zeros(count)
                        for index, value in lexical._postings[term]:
                            posting[index] = value
                        candidates.append((float(near[i]), vocabulary[i], posting))
                unknown.append((bool(lexical._expand(w)), candidates))
            gold = set(item.gold)
            requests.append(
                {
                    "gold": {i for i, doc in enumerate(docs) if doc.name in gold},
                    "labelled": bool(item.gold),
                    "score": score,
                    "matched": matched,
                    "confidence": confidence,
                    "z": z,
                    "top": max(totals.values(), default=0.0),
                    "exact_share": exact / max(1, len(content)),
                    "unknown": unknown,
                }
            )
        found[name] = {"count": count, "requests": requests}
        print(f"  parts of {name}: {len(queries)} requests", file=sys.stderr, flush=True)
    return found


def expansion(request: dict[str, Any], beta: float, min_cosine: float, nearest: int,
              unmatched_only: bool) -> Any:  # fmt: skip
    """The expansion's gain per tool: each unknown word scores through its best near word."""
    total = None
    for has_alternative, candidates in request["unknown"]:
        if unmatched_only and has_alternative:
            continue
        best, used = None, []
        for cosine, word, posting in candidates:
            if cosine < min_cosine:
                break
            if word not in used:
                used.append(word)
                if len(used) > nearest:
                    break
            best = (
                beta * cosine * posting
                if best is None
                else np.maximum(best, beta * cosine * posting)
            )
        if best is not None:
            total = best if total is None else total + best
    return total


def evaluate_set(data: dict[str, Any], gain: Gain) -> dict[str, float]:
    """R@1, R@5 and MRR of one dev set when the general part is added as `gain` says."""
    hits1 = hits5 = labelled = 0
    reciprocal = 0.0
    positions = np.arange(data["count"])
    for request in data["requests"]:
        if not request["labelled"]:
            continue
        labelled += 1
        if request["confidence"] <= 0:  # nothing vouched: the ranker returns nothing
            continue
        score, matched = request["score"].copy(), request["matched"].copy()
        if request["z"] is not None:
            extra = gain(request["z"], request)
            score += extra
            matched |= extra > 0
        ordered = np.where(matched, score, -1e9)
        top = [i for i in np.lexsort((positions, -ordered))[:5] if matched[i] and ordered[i] > 0]
        for rank, index in enumerate(top, start=1):
            if index in request["gold"]:
                hits5 += 1
                hits1 += rank == 1
                reciprocal += 1.0 / rank
                break
    return {"r1": hits1 / labelled, "r5": hits5 / labelled, "mrr": reciprocal / labelled}


def linear(weight: float = 6.0, floor: float = 2.0) -> Gain:
    return lambda z, r: np.where(z > floor, weight * (z - floor), 0.0)


def variants() -> list[tuple[str, Gain]]:
    """Every setting of the grids (a), (b) and (c)."""
    found: list[tuple[str, Gain]] = [("shipped: linear 6 × (z − 2)", linear())]
    for w, f in itertools.product([4, 5, 6, 7, 8], [1.5, 1.75, 2.0, 2.25, 2.5]):
        found.append((f"(b) linear w{w} floor {f}", linear(w, f)))
    for w, f, p in itertools.product([3, 4, 6, 8, 10], [1.0, 1.5, 2.0], [1.5, 2.0]):
        found.append((f"(b) power w{w} floor {f} p{p}",
                      lambda z, r, w=w, f=f, p=p: np.where(z > f, w * np.maximum(z - f, 0) ** p, 0.0)))  # fmt: skip
    for w, f, s in itertools.product([4, 6, 8], [1.5, 2.0, 2.5], [0.25, 0.5, 1.0]):
        found.append((f"(b) softplus w{w} floor {f} s{s}",
                      lambda z, r, w=w, f=f, s=s: w * s * np.logaddexp(0, (z - f) / s) * (z > f - 3 * s)))  # fmt: skip
    for w, f, a in itertools.product(
        [4, 5, 6, 8], [1.75, 2.0, 2.25], [-0.5, -0.25, 0.25, 0.5, 1.0]
    ):
        found.append((f"(a) w{w} × (top/20)^{a} floor {f}",
                      lambda z, r, w=w, f=f, a=a: np.where(z > f, w * (max(r["top"], 1) / 20) ** a * (z - f), 0.0)))  # fmt: skip
    for w, f, a in itertools.product([3, 4, 5, 6], [1.75, 2.0, 2.25], [0.25, 0.5, 1.0, 2.0]):
        found.append((f"(a) w{w} × (1 + {a} × unmatched share) floor {f}",
                      lambda z, r, w=w, f=f, a=a: np.where(z > f, w * (1 + a * (1 - r["exact_share"])) * (z - f), 0.0)))  # fmt: skip
    for w, f, a, b in itertools.product([4, 5, 6], [1.75, 2.0], [0.5, 1.0, 2.0], [5, 10, 20]):
        found.append((f"(a) w{w} × (1 + {a} e^(−top/{b})) floor {f}",
                      lambda z, r, w=w, f=f, a=a, b=b: np.where(z > f, w * (1 + a * math.exp(-r["top"] / b)) * (z - f), 0.0)))  # fmt: skip
    for beta, cosine, k, only in itertools.product(
        [0.25, 0.5, 0.75, 1.0, 1.5], [0.3, 0.4, 0.5, 0.55], [1, 3, 8], [True, False]
    ):

        def gain(z: Any, r: dict[str, Any], beta: float = beta, cosine: float = cosine,
                 k: int = k, only: bool = only) -> Any:  # fmt: skip
            extra = expansion(r, beta, cosine, k, only)
            base = linear()(z, r)
            return base if extra is None else base + extra

        label = "unmatched" if only else "unknown"
        found.append((f"(c) expand {label} words: β {beta}, cos ≥ {cosine}, {k} nearest", gain))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=12, help="settings shown per idea")
    args = parser.parse_args(argv)
    data = parts()
    results = []
    baseline: dict[str, dict[str, float]] = {}
    for label, gain in variants():
        figures = {name: evaluate_set(d, gain) for name, d in data.items()}
        objective = sum((figures[n]["r5"] + figures[n]["mrr"]) / 2 for n in OBJECTIVE_SETS) / 4
        if not baseline:
            baseline = figures
        none_lower = all(
            figures[n]["r5"] >= baseline[n]["r5"] - 1e-9
            and figures[n]["r5"] + figures[n]["mrr"]
            >= baseline[n]["r5"] + baseline[n]["mrr"] - 1e-9
            for n in figures
        )
        results.append((objective, none_lower, label, figures))
    names = list(data)
    print(f"{'objective':>9} {'no set lower':>12}  " + "  ".join(f"{n[:14]:>14}" for n in names))
    for idea in ("shipped", "(a)", "(b)", "(c)"):
        chosen = sorted((r for r in results if r[2].startswith(idea)), key=lambda r: -r[0])
        shown = chosen[: args.top]
        shown += [r for r in chosen if r[1] and r not in shown][:1]  # best lowering no set
        for objective, none_lower, label, figures in shown:
            cells = "  ".join(f"{figures[n]['r5']:.3f}/{figures[n]['mrr']:.3f}" for n in names)
            print(f"{objective:>9.4f} {'yes' if none_lower else 'no':>12}  {cells}  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
