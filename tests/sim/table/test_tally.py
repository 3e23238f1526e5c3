"""The paper tally: 5 points a stroke, 10 strokes (a big X and four small x's) a symbol."""

import pytest

from sim.table.tally import tally, tally_inline, tally_strokes

# Stroke weight of each glyph of the one-line form: a full symbol is 10 strokes, an X or a
# complete small x is 2, a lone diagonal is 1.
INLINE_STROKES = {"⊠": 10, "╳": 2, "×": 2, "╲": 1, "∖": 1}


@pytest.mark.parametrize(
    ("points", "expected"),
    [
        (0, (0, 0, 0)),
        (5, (0, 1, 0)),
        (10, (0, 2, 0)),
        (45, (0, 9, 0)),
        (50, (1, 0, 0)),
        (135, (2, 7, 0)),
        (250, (5, 0, 0)),
        (-135, (2, 7, 0)),
        (13, (0, 2, 3)),
        (-4, (0, 0, 4)),
    ],
)
def test_tally_strokes(points: int, expected: tuple[int, int, int]) -> None:
    assert tally_strokes(points) == expected


def test_zero_and_small_scores_are_digits() -> None:
    assert tally(0) == "0"
    assert tally(3) == "3"
    assert tally(-3) == "−3"
    assert tally(-3, ascii=True) == "-3"


def test_one_and_two_strokes_build_the_big_x() -> None:
    assert tally(5) == "╲\n  ╲\n    ╲"
    assert tally(10) == "╲   ╱\n  ╳\n╱   ╲"


def test_small_xs_go_clockwise_from_the_top() -> None:
    # 15: first stroke of the top small x; 25: top complete, first stroke on the right.
    assert tally(15) == "╲ ∖ ╱\n  ╳\n╱   ╲"
    assert tally(25) == "╲ × ╱\n  ╳ ∖\n╱   ╲"
    assert tally(35) == "╲ × ╱\n  ╳ ×\n╱ ∖ ╲"
    assert tally(45) == "╲ × ╱\n∖ ╳ ×\n╱ × ╲"


def test_full_symbol() -> None:
    assert tally(50) == "╲ × ╱\n× ╳ ×\n╱ × ╲"
    assert tally(50, ascii=True) == "\\ x /\nx X x\n/ x \\"


def test_135_is_two_symbols_and_seven_strokes() -> None:
    assert tally(135) == (
        "╲ × ╱  ╲ × ╱  ╲ × ╱\n"
        "× ╳ ×  × ╳ ×    ╳ ×\n"
        "╱ × ╲  ╱ × ╲  ╱ ∖ ╲"
    )


def test_250_is_five_full_symbols() -> None:
    art = tally(250)
    assert art.count("╳") == 5  # one big X centre per symbol
    assert art.count("×") == 20  # four small x's per symbol
    assert "∖" not in art
    assert art.splitlines()[1] == "  ".join(["× ╳ ×"] * 5)


def test_negative_puts_a_minus_before_the_whole_tally() -> None:
    assert tally(-15) == "  ╲ ∖ ╱\n−   ╳\n  ╱   ╲"
    assert tally(-50, ascii=True) == "  \\ x /\n- x X x\n  / x \\"


def test_non_multiple_of_five_shows_the_remainder_in_digits() -> None:
    rows = tally(13).splitlines()
    assert rows == ["╲   ╱", "  ╳   +3", "╱   ╲"]
    assert tally(-13).splitlines()[1] == "−   ╳   +3"


def test_ascii_variant_is_ascii() -> None:
    for points in (-137, 0, 5, 45, 135, 250):
        assert tally(points, ascii=True).isascii()
        assert tally_inline(points, ascii=True).isascii()


@pytest.mark.parametrize(
    ("points", "expected"),
    [
        (0, "· (0)"),
        (5, "╲ (5)"),
        (10, "╳ (10)"),
        (45, "╳×××∖ (45)"),
        (50, "⊠ (50)"),
        (135, "⊠⊠ ╳××∖ (135)"),
        (250, "⊠⊠⊠⊠⊠ (250)"),
        (-15, "−╳∖ (-15)"),
        (13, "╳+3 (13)"),
        (3, "·+3 (3)"),
    ],
)
def test_tally_inline(points: int, expected: str) -> None:
    assert tally_inline(points) == expected


def test_tally_inline_ascii() -> None:
    assert tally_inline(135, ascii=True) == "## Xxx\\ (135)"
    assert tally_inline(-5, ascii=True) == "-\\ (-5)"


@pytest.mark.parametrize("points", range(0, 505, 5))
def test_inline_strokes_add_up_to_the_points(points: int) -> None:
    glyphs = tally_inline(points).split(" (")[0]
    strokes = sum(INLINE_STROKES.get(char, 0) for char in glyphs)
    assert strokes * 5 == points


def test_rejects_non_integers() -> None:
    with pytest.raises(TypeError):
        tally(12.5)  # type: ignore[arg-type]
