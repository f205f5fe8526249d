"""The prefix arithmetic reproduces every worked number of DESIGN.md section 1 (B = 16)."""

import pytest

from promptlint.arithmetic.compare import Comparison, compare, engine_profile, eligible_tokens, shared_prefix


def test_same_1200_token_request_twice_reuses_1184():
    # floor(min(1200, 1199) / 16) * 16 = 74 * 16
    assert eligible_tokens(1200, 1200, 16) == 1184


def test_static_prefix_then_user_suffix_reuses_992_in_62_blocks():
    c = Comparison(shared=1000, prompt_len=1200, ideal_shared=1000, block_size=16)
    assert c.eligible_tokens == 992
    assert c.eligible_blocks == 62
    assert c.lost_blocks == 0


def test_timestamp_at_token_12_loses_all_62_blocks():
    c = Comparison(shared=12, prompt_len=1200, ideal_shared=1000, block_size=16)
    assert c.eligible_tokens == 0
    assert c.ideal_eligible_blocks == 62
    assert c.lost_blocks == 62
    assert c.lost_tokens == 992


def test_timestamp_moved_to_token_1150_reuses_1136():
    assert eligible_tokens(1150, 1200, 16) == 1136


def test_two_documents_swapped_after_200_token_system_prompt():
    # shared 200 -> 192 eligible (12 blocks); ideal: system + both documents = 1,000 -> 62 blocks
    c = Comparison(shared=200, prompt_len=1200, ideal_shared=1000, block_size=16)
    assert c.eligible_tokens == 192
    assert c.lost_blocks == 50


def test_last_token_is_always_recomputed():
    # a 33-token prompt fully shared: min(33, 32) = 32 -> 2 blocks, not floor(33/16)=2... and 32-token prompt -> 1 block
    assert eligible_tokens(32, 32, 16) == 16
    assert eligible_tokens(33, 33, 16) == 32


def test_shared_prefix_of_token_lists():
    assert shared_prefix([1, 2, 3, 4], [1, 2, 9, 4]) == 2
    assert shared_prefix([1, 2], [1, 2, 3]) == 2
    assert shared_prefix([], [1]) == 0
    assert compare([5, 6, 7], [5, 6, 8, 9], ideal_shared=4, block_size=1).shared == 2


@pytest.mark.parametrize(
    "engine,block,shared,plen,expected",
    [
        ("vllm", None, 40, 100, 32),  # B = 16 by default
        ("vllm", 32, 40, 100, 32),
        ("sglang", None, 40, 100, 40),  # page 1: token-granular
        ("sglang", 8, 45, 100, 40),
        ("llamacpp", None, 100, 100, 99),  # capped at P - 1
    ],
)
def test_engine_profiles(engine, block, shared, plen, expected):
    assert engine_profile(engine, block).eligible(shared, plen) == expected


def test_unknown_engine_is_rejected():
    with pytest.raises(ValueError):
        engine_profile("tgi")
