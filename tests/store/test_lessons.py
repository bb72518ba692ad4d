"""Lessons: kept, listed, deleted, and found again by full-text search on both backends."""

from __future__ import annotations

import pytest

from bot.store import (
    InvestigationRecord,
    Store,
    StoreError,
    UnknownInvestigationError,
    UnknownLessonError,
)

LESSONS = [
    (
        "pool",
        "The connection pool of orders-db was exhausted: orders pods timed out reaching the "
        "database. Check pool usage and raise the max pool size.",
        {"services": ["orders", "orders-db"], "namespaces": ["shop"],
         "symptoms": ["connection-timeout", "5xx"]},
    ),
    (
        "oom",
        "checkout was OOMKilled at its 256Mi memory limit after a release; raise the limit "
        "or roll the release back.",
        {"services": ["checkout"], "namespaces": ["shop"], "symptoms": ["oom", "restarts"]},
    ),
    (
        "dns",
        "ledger could not resolve its database host after a DNS change in the cluster.",
        {"services": ["ledger"], "namespaces": ["finance"], "symptoms": ["dns"]},
    ),
    (
        "pull",
        "Image pulls failed from the private registry because the pull secret had expired.",
        {"services": ["stock-sync"], "namespaces": ["warehouse"], "symptoms": ["image-pull"]},
    ),
    (
        "cpu",
        "A noisy neighbour saturated node CPU and latency rose for everything on that node.",
        {"services": ["payments"], "namespaces": ["billing"], "symptoms": ["cpu-throttling"]},
    ),
    (
        "mention",
        "The orders team said payments looked fine while a node was drained for upgrades.",
        {"services": ["orders"], "namespaces": ["shop"], "symptoms": ["maintenance"]},
    ),
]


@pytest.fixture
async def names(store: Store) -> dict[int, str]:
    """Load the lessons; map their ids back to the short names above."""
    found: dict[int, str] = {}
    for name, text, tags in LESSONS:
        lesson = await store.add_lesson(text, **tags)
        found[lesson.id] = name
    return found


async def ranked(store: Store, names: dict[int, str], query: str, limit: int = 5) -> list[str]:
    return [names[lesson.id] for lesson in await store.search_lessons(query, limit)]


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("orders pods keep timing out talking to the database", "pool"),
        ("checkout pods restarting, last state OOMKilled", "oom"),
        ("ledger: lookup of db host failed, DNS", "dns"),
        ("ErrImagePull: pull access denied, registry secret", "pull"),
    ],
)
async def test_the_relevant_lesson_ranks_first(
    store: Store, names: dict[int, str], query: str, best: str
) -> None:
    found = await ranked(store, names, query)
    assert found[0] == best, found


@pytest.mark.parametrize(
    ("query", "only"),
    [("stock-sync", "pull"), ("finance", "dns"), ("5xx", "pool"), ("image-pull", "pull")],
)
async def test_tags_alone_are_searchable(
    store: Store, names: dict[int, str], query: str, only: str
) -> None:
    assert await ranked(store, names, query) == [only]


async def test_a_tag_weighs_more_than_a_passing_mention(
    store: Store, names: dict[int, str]
) -> None:
    assert await ranked(store, names, "payments") == ["cpu", "mention"]


async def test_words_match_across_inflections(store: Store, names: dict[int, str]) -> None:
    assert (await ranked(store, names, "restarted"))[0] == "oom"
    assert (await ranked(store, names, "exhausting pools"))[0] == "pool"


async def test_unrelated_text_finds_nothing_and_limits_hold(
    store: Store, names: dict[int, str]
) -> None:
    assert await ranked(store, names, "kafka consumer lag") == []
    assert await ranked(store, names, "the and of is") == []
    assert await ranked(store, names, "") == []
    assert len(await ranked(store, names, "orders shop node", limit=2)) == 2


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "a:b OR (c AND",
        "it's 50% * ^ | & ! <-> \\ ; DROP TABLE lessons; --",
        "NEAR(x y)",
    ],
)
async def test_query_syntax_in_the_text_cannot_break_the_search(
    store: Store, names: dict[int, str], query: str
) -> None:
    await store.search_lessons(query)
    assert len(await store.lessons()) == len(LESSONS)


async def test_a_deleted_lesson_is_no_longer_found(store: Store, names: dict[int, str]) -> None:
    pool = next(i for i, name in names.items() if name == "pool")
    await store.delete_lesson(pool)
    assert "pool" not in await ranked(store, names, "orders-db connection pool")
    with pytest.raises(UnknownLessonError):
        await store.lesson(pool)
    with pytest.raises(UnknownLessonError):
        await store.delete_lesson(pool)


async def test_lessons_are_listed_newest_first_and_ids_are_never_reused(store: Store) -> None:
    first = await store.add_lesson("  first  ", services=["a", " a ", ""], symptoms=["x y"])
    second = await store.add_lesson("second")
    assert [lesson.id for lesson in await store.lessons()] == [second.id, first.id]
    assert (first.text, first.services, first.symptoms) == ("first", ("a",), ("x y",))
    assert await store.lesson(first.id) == first
    await store.delete_lesson(second.id)
    third = await store.add_lesson("third")
    assert third.id > second.id


async def test_a_lesson_names_the_investigation_it_came_from(store: Store) -> None:
    with pytest.raises(UnknownInvestigationError):
        await store.add_lesson("x", source_investigation="nope")
    assert await store.lessons() == []


async def _incident(store: Store, investigation_id: str) -> None:
    await store.create(InvestigationRecord(investigation_id, "C1", f"1.{investigation_id}",
                                           "orders pods time out", "alice", "m"))


async def test_a_pending_reflection_is_found_only_once_its_diagnosis_is_confirmed(
    store: Store,
) -> None:
    await _incident(store, "reflected")
    await _incident(store, "other")
    mine = await store.add_lesson("the orders-db pool was the cause, not the pods",
                                  services=["orders-db"], source_investigation="reflected",
                                  state="pending")
    theirs = await store.add_lesson("orders-db pool again, from another incident",
                                    services=["orders-db"], source_investigation="other",
                                    state="pending")
    human = await store.add_lesson("a human said: the orders-db pool", services=["orders-db"],
                                   source_investigation="other")
    assert (mine.state, theirs.state, human.state) == ("pending", "pending", "confirmed")
    assert [lesson.id for lesson in await store.search_lessons("orders-db pool")] == [human.id]
    assert [lesson.id for lesson in await store.lessons(state="pending")] == [theirs.id, mine.id]

    assert await store.confirm_lessons("reflected") == 1
    assert await store.confirm_lessons("reflected") == 0, "confirmed once"
    found = {lesson.id for lesson in await store.search_lessons("orders-db pool")}
    assert found == {human.id, mine.id}, "the other incident's reflection still waits"
    assert (await store.lesson(mine.id)).state == "confirmed"
    assert (await store.lesson(theirs.id)).state == "pending"


async def test_a_pending_lesson_names_its_investigation_and_a_known_state(store: Store) -> None:
    with pytest.raises(StoreError, match="name the investigation"):
        await store.add_lesson("x", state="pending")
    with pytest.raises(StoreError, match="unknown lesson state 'maybe'"):
        await store.add_lesson("x", state="maybe")  # type: ignore[arg-type]
    assert await store.lessons() == []
