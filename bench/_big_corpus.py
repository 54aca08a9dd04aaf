"""A large user's history as distinct sentences (`bench.big_user --corpus sentences`).

The default corpus of `bench.big_user` gives each memory a noisy copy of one of 420 sentence
embeddings: about 476 memories within cosine ~0.87 of each other around every sentence. That is
a stress case for an HNSW index (each cluster's nodes fill their neighbour lists with each
other, so a singleton between clusters has few incoming links), not what a year of an
assistant's memories looks like: on the chat path the gate drops near-duplicates, and
consolidation merges those a bulk import let through. This corpus is the other end: every
memory is a different sentence, composed from a grammar (who, what, where, when, and the frame
it is said in) and embedded by the real model, so the user's vectors have the spread real
sentences have (topics recur; sentences do not). Embedding 200,000 of them takes ~10 minutes on
2 cores; `bench.big_user` does it once, at load time.
"""

from __future__ import annotations

import random

_WHO = [
    "I", "my sister", "my brother", "my mother", "my father", "my partner", "my manager",
    "my cousin Leo", "my neighbour Ines", "our intern", "the landlord", "my friend Ana",
    "my colleague Raj", "my grandmother", "my uncle Tomas", "our team lead", "the accountant",
    "my flatmate", "my son", "my daughter", "the new hire", "my physiotherapist", "my tutor",
    "the plumber", "my running buddy", "our designer", "the recruiter", "my aunt Clara",
    "the project sponsor", "my best friend", "my old classmate", "the vet", "our client",
    "the building manager", "my mentor", "my nephew", "the support engineer", "my boss",
]  # fmt: skip
_WHAT = [
    "booked a table at the Thai place", "started learning the cello", "renewed the passport",
    "fixed the leaking kitchen tap", "migrated the billing service to Kubernetes",
    "reviewed the pull request about caching", "signed up for a half marathon",
    "bought a second-hand road bike", "planted tomatoes and basil on the balcony",
    "cancelled the gym membership", "asked for a raise", "painted the hallway green",
    "wrote the quarterly budget forecast", "adopted a rescue greyhound",
    "switched the phone plan to a cheaper one", "rebuilt the search index",
    "found a bug in the date parser", "planned a weekend in the mountains",
    "ordered new reading glasses", "moved the standup to ten o'clock",
    "recommended a novel about sailing", "took the car in for its inspection",
    "baked sourdough for the first time", "upgraded the laptop's memory",
    "set up automatic backups for the photos", "complained about the noisy upstairs flat",
    "finished the online statistics course", "paid the electricity bill late",
    "organised a birthday dinner", "gave a talk on observability",
    "returned the broken headphones", "started taking vitamin D", "sold the old sofa",
    "drafted the wedding guest list", "tried a new pasta recipe", "changed the wifi router",
    "rewrote the onboarding guide", "scheduled a dentist check-up", "lost the house keys",
    "rotated the database credentials", "joined a climbing gym", "visited the art museum",
    "applied for a mortgage", "repotted the fig tree", "learned to make dumplings",
    "watched the documentary about octopuses", "volunteered at the food bank",
    "archived the old project repositories", "bought concert tickets",
    "paused the streaming subscription", "replaced the bathroom light",
    "negotiated the contract renewal", "started a podcast about chess",
    "tracked down the memory leak", "booked train tickets to the coast",
    "picked up the dry cleaning", "made an appointment with the optician",
    "filed the tax return", "adjusted the thermostat schedule", "got a flu shot",
    "decided to learn Portuguese", "set a reading goal of twenty books",
    "updated the emergency contacts", "measured the living room for a rug",
    "bought a standing desk", "cleaned out the garage", "tested the smoke alarms",
    "compared prices for car insurance", "lent the drill to a neighbour",
    "wrote a thank-you card", "switched to decaf in the afternoons",
    "labelled the spice jars", "ran the load test against staging",
    "rolled back the failed deployment", "reserved a campsite by the lake",
    "read the chapter on distributed consensus", "sent the invoice to the client",
    "repaired the bike's rear brake", "booked a massage", "reorganised the bookshelf",
    "installed a new dishwasher", "practised the piano scales",
]  # fmt: skip
_WHERE = [
    "", "in Lisbon", "at the office", "at home", "in Porto", "near the river",
    "at the community centre", "in Berlin", "downtown", "at the cabin", "in the garden",
    "at the airport", "in Madrid", "at the library", "on the train", "at the café on the corner",
    "in Kyoto", "at my parents' place", "in the new flat", "at the coworking space",
]  # fmt: skip
_WHEN = [
    "", "on Monday", "last weekend", "this morning", "after lunch", "before the deadline",
    "yesterday evening", "in early spring", "during the holidays", "last Thursday",
    "at the end of the month", "two weeks ago", "over the summer", "on my birthday",
    "before the trip", "after the meeting", "late at night", "on a rainy Sunday",
]  # fmt: skip
_FRAMES = [
    "{who} {what} {where} {when}", "Note to self: {who} {what} {where} {when}",
    "Just so you know, {who} {what} {when} {where}", "Remember that {who} {what} {when}",
    "{when}, {who} {what} {where}", "Apparently {who} {what} {where}",
    "Good news: {who} {what} {when}", "Ugh, {who} {what} {where} {when} again",
    "For the record, {who} {what} {where}", "{who} finally {what} {when}",
]  # fmt: skip


def sentences(n: int, seed: int = 11) -> list[str]:
    """`n` distinct sentences from the grammar, in a fixed order for a seed."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        frame = rng.choice(_FRAMES)
        text = frame.format(
            who=rng.choice(_WHO), what=rng.choice(_WHAT),
            where=rng.choice(_WHERE), when=rng.choice(_WHEN),
        )  # fmt: skip
        # An empty slot leaves a double space, or a comma first ("{when}, ..." with no when).
        text = " ".join(text.replace(" ,", ",").split()).removeprefix(", ")
        text = text[0].upper() + text[1:] + "."
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


__all__ = ["sentences"]
