"""Why a labeling scores what it scores: the score of a path of a linear-chain model, term by term.

A globally normalized model scores a labeling y of tokens 0 .. n-1 as w · Φ(x, y) (``records.py``
gives the layout of w)::

    score(y) = sum_t [ sum_{f fires at t} value_f w(f, y_t)            emission
                       + trans(y_{t-1}, y_t) + sum_{g at t} pair(g, y_{t-1}, y_t)
                       + trans2(y_{t-2}, y_{t-1}, y_t) ]                 order 2 only
               + end(y_{n-1})

with y_{-1} = y_{-2} = the start state. ``explain_path`` lists every term, token by token, so that
the totals add up to the score of the path (``LinearChainModel.score``).

Each token also gets a runner-up: the label d that keeps the most of the score when it alone
replaces y_t, the rest of the path kept. The margin is score(y) - score(y with y_t = d): the
emission of token t and every transition term that reads y_t change, nothing else. A label the
constraint or the tag dictionary forbids there is no runner-up.
"""
import numpy as np

from structperc.errors import ConfigError

START = "<start>"


class Explainer:
    """The terms of paths of one model; built once, used for many sentences.

    model : a globally normalized LinearChainModel (a MEMM's scores are normalized per token, and
        are not a sum of weights: ConfigError).
    """

    def __init__(self, model):
        if model.normalization != "global":
            raise ConfigError("explain needs a globally normalized model (perceptron, crf, hinge, winnow ...): "
                              "a MEMM's score is a product of per-token distributions, not a sum of weights")
        self.model = model
        self._names = {}  # feature id -> its description: a corpus repeats the same features
        self._data = (None, None)  # (the EncodedCorpus, its Data record with the model's candidates)
        self.layout = model.layout()
        self.n_labels = model.n_labels
        self.weights = model.weights
        self.transition = model.transition_weights()  # (L + 1, L), row L the start
        self.end = self.weights[self.layout.off_end: self.layout.off_end + self.n_labels]

    def describe(self, feature_id, pair=False):
        key = (feature_id, pair)
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = self.model.encoder.describe_feature(feature_id, pair=pair)
        return name

    def data(self, encoded):
        """The kernels' Data record of ``encoded`` (built once per corpus)."""
        if self._data[0] is not encoded:
            self._data = (encoded, self.model.data(encoded))
        return self._data[1]

    def explain_path(self, encoded, sentence, y, versus=None, tokens=None, top=None):
        """Every term of the score of labeling ``y`` of one sentence of an EncodedCorpus.

        Parameters
        ----------
        encoded : EncodedCorpus (the model's encoding of the input)
        sentence : index of the sentence in ``encoded``
        y : int array (n,), the label ids of the path (the prediction, or any labeling)
        versus : None, or int array (n,): a label to compare with at each token instead of the
            runner-up (-1, or the token's own label: the runner-up)
        tokens : None, or the n strings to show for the tokens
        top : None (list every feature with a weight for either label), or k: the k features that
            favour the label most over the other, and one entry {"feature": "(m more features)",
            "more": m, ...} with the sums of the rest (the totals stay exact)

        Returns
        -------
        dict: labels, score (the path's score), emission, transition, end (its three parts), and
        tokens: per token its label, the other label and the margin over it (None when no other
        label fits), the emission of both, the features (feature, value, weight, other_weight) and
        the transition terms (term, weight).
        """
        from structperc._kernels.score.changes import feature_weights, one_label_changes

        model, layout, w = self.model, self.layout, self.weights
        L = self.n_labels
        a, b = int(encoded.sentence_offsets[sentence]), int(encoded.sentence_offsets[sentence + 1])
        n = b - a
        y = np.ascontiguousarray(y, dtype=np.int64)
        if len(y) != n:
            raise ConfigError(f"the labeling has {len(y)} labels, the sentence {n} tokens")
        data = self.data(encoded)
        local, emission = one_label_changes(w, layout, data, a, b, y)
        # the other label of each token: the one given, else the best one-label change
        changed = local.copy()
        changed[np.arange(n), y] = -np.inf
        other = np.where(np.isfinite(changed.max(axis=1, initial=-np.inf)), changed.argmax(axis=1), -1)
        if versus is not None:
            versus = np.asarray(versus, dtype=np.int64)
            other = np.where((versus >= 0) & (versus != y), versus, other)
        weight = feature_weights(w, layout, data, a, b, y)
        other_weight = feature_weights(w, layout, data, a, b, np.ascontiguousarray(other))
        lo = int(data.feature_offsets[a])
        values = data.feature_values

        def label(c):
            return START if c == L else model.labels[c]

        result_tokens = []
        total_emission = total_transition = 0.0
        for t in range(n):
            c, d = int(y[t]), int(other[t])
            p = int(y[t - 1]) if t > 0 else L
            q = int(y[t - 2]) if t > 1 else L
            start, stop = int(data.feature_offsets[a + t]), int(data.feature_offsets[a + t + 1])
            ids = data.feature_ids[start:stop]
            v = values[start:stop].astype(float) if len(values) else np.ones(stop - start)
            w_label, w_other = weight[start - lo: stop - lo], other_weight[start - lo: stop - lo]
            # the features with a weight for either label, those that favour the label most first
            kept = np.flatnonzero((w_label != 0) | (w_other != 0))
            kept = kept[np.argsort(-v[kept] * (w_label[kept] - w_other[kept]), kind="stable")]
            shown, rest = (kept, kept[:0]) if top is None else (kept[:top], kept[top:])
            features = [{"feature": self.describe(int(ids[k])), "value": float(v[k]),
                         "weight": float(w_label[k]), "other_weight": float(w_other[k])} for k in shown]
            if len(rest):
                features.append({"feature": f"({len(rest)} more features)", "value": 1.0, "more": len(rest),
                                 "weight": float(v[rest] @ w_label[rest]),
                                 "other_weight": float(v[rest] @ w_other[rest])})
            terms = [{"term": f"{label(p)} -> {label(c)}", "weight": float(self.transition[p, c])}]
            if len(data.pair_offsets):
                size = (L + 1) * L
                for g in data.pair_ids[data.pair_offsets[a + t]: data.pair_offsets[a + t + 1]]:
                    pair_weight = float(w[layout.off_pair + int(g) * size + p * L + c])
                    if pair_weight != 0.0:
                        terms.append({"term": f"{self.describe(int(g), pair=True)} & {label(p)} -> {label(c)}",
                                      "weight": pair_weight})
            if model.order == 2:
                terms.append({"term": f"{label(q)}, {label(p)} -> {label(c)}",
                              "weight": float(w[layout.off_trans2 + (q * (L + 1) + p) * L + c])})
            token_emission = float(sum(f["value"] * f["weight"] for f in features))
            token_transition = float(sum(term["weight"] for term in terms))
            total_emission += token_emission
            total_transition += token_transition
            result_tokens.append({
                "token": tokens[t] if tokens is not None else str(t + 1),
                "label": model.labels[c],
                "other": model.labels[d] if d >= 0 else None,
                "margin": _finite(local[t, c] - local[t, d]) if d >= 0 else None,
                "emission": token_emission,
                "other_emission": _finite(emission[t, d]) if d >= 0 else None,
                "features": features,
                "transition": token_transition,
                "transitions": terms,
            })
        end = float(self.end[y[-1]]) if n else 0.0
        return {"labels": [model.labels[c] for c in y], "score": total_emission + total_transition + end,
                "emission": total_emission, "transition": total_transition, "end": end, "tokens": result_tokens}


def _finite(x):
    """x as a float, None when infinite (a label the constraint forbids there)."""
    return float(x) if np.isfinite(x) else None


def format_explanation(explanation, top=5):
    """The text of ``explain_path``'s dict: the score and its parts, then for each token its label,
    the runner-up (or the label compared with) and the margin, the ``top`` features that favour the
    label most over it (the others summed on one line) and the transition terms."""
    lines = [f"score {explanation['score']:+.4f} = emission {explanation['emission']:+.4f} "
             f"+ transitions {explanation['transition']:+.4f} + end {explanation['end']:+.4f}",
             "(per token: the label, the other label and the margin over it; per feature: its weight with "
             "the label, with the other label)"]
    width = max((len(t["token"]) for t in explanation["tokens"]), default=1)
    for i, token in enumerate(explanation["tokens"], 1):
        other = token["other"]
        if other is None:
            versus = "  (no other label fits the rest of the path)"
        elif token["margin"] is None:
            versus = f"  ({other} is not allowed here)"
        else:
            versus = f"  over {other} by {token['margin']:+.4f}"
        lines.append(f"{i:>3} {token['token']:<{width}}  {token['label']}{versus}")
        if other is not None:
            lines.append(f"      emission {token['emission']:+.4f} ({token['label']}) against "
                         f"{token['other_emission']:+.4f} ({other})")
        else:
            lines.append(f"      emission {token['emission']:+.4f}")
        features = token["features"]
        for f in features[:top]:
            value = "" if f["value"] == 1.0 else f" x {f['value']:g}"
            lines.append(f"        {f['weight']:+9.4f} {f['other_weight']:+9.4f}  {f['feature']}{value}")
        if len(features) > top:
            rest = features[top:]
            lines.append(f"        {sum(f['value'] * f['weight'] for f in rest):+9.4f} "
                         f"{sum(f['value'] * f['other_weight'] for f in rest):+9.4f}  "
                         f"({len(rest)} more features)")
        for term in token["transitions"]:
            lines.append(f"      transition {term['weight']:+.4f}  {term['term']}")
    if explanation["tokens"]:
        lines.append(f"      end {explanation['end']:+.4f}  {explanation['labels'][-1]}")
    return "\n".join(lines)


class Explanation(dict):
    """``explain_path``'s dict; ``text(top)`` (and ``str``) is its terminal view (``format_explanation``)."""

    def text(self, top=5):
        return format_explanation(self, top)

    def __str__(self):
        return self.text()


def corpus_words(corpus):
    """The tokens of a Corpus as shown: its ``word`` or ``form`` column, else its first one."""
    names = [name for name in corpus.columns if name != corpus.label] or list(corpus.columns)
    name = next((n for n in ("word", "form") if n in corpus.columns), names[0])
    return [str(w) for w in corpus.columns[name]]
