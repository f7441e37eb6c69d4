"""The suites' number and timestamp patterns spell Python's `\\s` out (suites.WHITESPACE) so
that pandas matches them with pyarrow's RE2; they must accept exactly what the `\\s` patterns
accept."""

from __future__ import annotations

import re

import pandas as pd

from kubeledger.quality.suites import NUMBER_REGEX, TIMESTAMP_REGEX, WHITESPACE

WITH_BACKSLASH_S = {
    "number": NUMBER_REGEX.replace(WHITESPACE, r"\s"),
    "timestamp": TIMESTAMP_REGEX.replace(WHITESPACE, r"\s"),
}
VALUES = [
    "1",
    " 2.5 ",
    "\u00a03\u3000",
    "1e5",
    "-.5",
    "+7E-3",
    "abc",
    "",
    "1.2.3",
    "\t4\x0b",
    "\u0663",
    "5\u200b",
    "2026-10-01 00:00:00 +0000 UTC",
    "2026-10-01T00:00:00Z",
    " 2026-10-01 00:00:00 +0200 CEST ",
    "2026-10-01 Europe/Berlin",
    "2026-10-01\u2028",
    "10/01/2026 1:00 PM",
    "10/01/2026\x1c",
    "2026-13-01x",
    "2026-10-01 00:00:00\x85",
]


def test_the_whitespace_class_is_pythons_backslash_s():
    every = [chr(code) for code in range(0x110000)]
    assert {c for c in every if re.fullmatch(WHITESPACE, c)} == {
        c for c in every if re.match(r"\s", c)
    }


def test_the_patterns_match_what_their_backslash_s_forms_match():
    values = pd.Series(VALUES)
    for pattern, original in ((NUMBER_REGEX, "number"), (TIMESTAMP_REGEX, "timestamp")):
        assert "\\s" not in pattern  # no `\s` left: pandas can use pyarrow's RE2
        expected = [bool(re.search(WITH_BACKSLASH_S[original], value)) for value in VALUES]
        assert values.str.contains(pattern, regex=True).tolist() == expected
        assert any(expected) and not all(expected)
