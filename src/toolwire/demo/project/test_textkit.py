from textkit import title_case, word_count


def test_word_count_simple() -> None:
    assert word_count("one two three") == 3


def test_word_count_any_whitespace() -> None:
    assert word_count("one\ntwo\tthree  four") == 4


def test_word_count_empty() -> None:
    assert word_count("") == 0


def test_title_case() -> None:
    assert title_case("hello wide world") == "Hello Wide World"
