"""Documents for the adapters' round trips: 40 clusters of 3 near-duplicates
(one word changed), so that within a cluster the estimated Jaccard is well
above the default threshold 0.5 and between clusters near 0. An lsh index
then finds exactly the cluster for % and for ORDER BY <%> LIMIT 3: its
answers are checked against pgminhash's own estimates, not hard-coded."""
import random

import pgminhash

THRESHOLD = 0.5  # minhash.similarity_threshold's default


def documents():
    rng = random.Random(5)
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzäöüßç") for _ in range(7))
                  for _ in range(3000)]
    docs = []
    for c in range(40):
        words = [rng.choice(vocabulary) for _ in range(60)]
        docs.append(" ".join(words))
        for position in (15, 45):
            variant = list(words)
            variant[position] = rng.choice(vocabulary)
            docs.append(" ".join(variant))
    return list(enumerate(docs, 1))


def signatures():
    return {i: pgminhash.minhash(body) for i, body in documents()}


def similar_to(sigs, query):
    """The ids % finds for query, from pgminhash's estimates; fails if any
    estimate is close enough to the threshold to make the index's answer a
    matter of chance."""
    found = set()
    for i, sig in sigs.items():
        j = sig.jaccard(query)
        assert j >= 0.6 or j <= 0.3, f"row {i}: estimate {j} too close to the threshold"
        if j >= THRESHOLD:
            found.add(i)
    return found


def nearest(sigs, query, n):
    """The n nearest ids by estimated Jaccard distance, with their distances."""
    ranked = sorted((1 - sig.jaccard(query), i) for i, sig in sigs.items())
    return ranked[:n]
