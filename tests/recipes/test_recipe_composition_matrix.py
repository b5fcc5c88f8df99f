"""Every ordered pair of cookbook recipes keeps both guarantees, or the build names both;
and every warning is for a guarantee that really breaks.

For each ordered pair (and sampled triples, and each recipe beside each of LangChain's
built-ins, in both orders) an agent is built with the stack and runs the scenario aimed at
each member's guarantee (``recipe_guarantees.RECIPES``: one scenario and one check per
recipe, and a few more for a recipe's other middleware), whatever the build said. A stack
fails when a guarantee broke and no ``MiddlewareOrderWarning`` (or
``MiddlewareOrderError``) named its member and another (a miss: recall), or when a warning
was given none of whose named members' guarantees broke (a false warning: precision).
Recipes left out are in ``recipe_guarantees.EXCLUDED``, each with its reason; no pair is
skipped. The LangChain cases need the ``langchain`` extra (skipped without it, failed when
``FUNCWARE_REQUIRE_LANGCHAIN=1``). The counts of stacks run, and the precision and recall
of the warnings, are printed at the end of the session.

To see the matrix catch a recipe gone wrong, point it at a broken copy of the recipe:
``FUNCWARE_MATRIX_RECIPE=human_approval=/tmp/broken.py pytest <this module>``.
"""

from __future__ import annotations

from itertools import permutations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recipe_guarantees import EXCLUDED, RECIPES, Member, builtins, check_stack
from support import require_langchain

from funcware import cookbook

PAIRS = list(permutations(RECIPES, 2))


def test_every_recipe_is_in_the_matrix_or_excluded_with_a_reason() -> None:
    covered = {m.name for m in RECIPES}
    assert covered | set(EXCLUDED) == set(cookbook.RECIPES)
    assert not covered & set(EXCLUDED)
    assert all(len(reason) > 40 for reason in EXCLUDED.values())
    assert all(m.scenario is not None and m.holds is not None and m.guarantee for m in RECIPES)
    for name in cookbook.RECIPES:  # each states its guarantee, in one sentence
        doc = cookbook.load(name).__doc__ or ""
        assert doc.count("\nGuarantee") == 1, name
        sentence = doc.split("\nGuarantee", 1)[1].split("\n\n", 1)[0]
        assert sentence.rstrip().endswith(".") and sentence.count(". ") == 0, (name, sentence)


@pytest.mark.parametrize("member", RECIPES, ids=lambda m: m.name)
def test_each_recipe_alone_keeps_its_guarantee(member: Member) -> None:
    assert check_stack([member], "alone") == []


@pytest.mark.parametrize(("outer", "inner"), PAIRS, ids=[f"{a.name}>{b.name}" for a, b in PAIRS])
def test_both_guarantees_hold_or_the_build_names_both(outer: Member, inner: Member) -> None:
    problems = check_stack([outer, inner], "pairs")
    assert not problems, "\n".join(problems)


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.sampled_from(RECIPES), min_size=3, max_size=3, unique_by=lambda m: m.name))
def test_sampled_triples_keep_every_guarantee_or_the_build_names_them(
    stack: list[Member],
) -> None:
    problems = check_stack(stack, "triples")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda m: m.name)
def test_the_recipe_beside_each_langchain_builtin_in_both_orders(recipe: Member) -> None:
    require_langchain("langchain.agents.middleware")
    problems = []
    for builtin in builtins():
        for stack in ([recipe, builtin], [builtin, recipe]):
            problems += check_stack(stack, "builtin pairs")
    assert not problems, "\n".join(problems)
