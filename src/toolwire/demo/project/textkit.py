"""Small text helpers."""


def word_count(text: str) -> int:
    """The number of words in text; words are separated by any run of whitespace."""
    return len(text.split(" "))


def title_case(text: str) -> str:
    """Each word of text with its first letter in upper case."""
    return " ".join(word.capitalize() for word in text.split())
