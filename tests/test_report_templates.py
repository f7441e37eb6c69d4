"""The report's templates escape every value from the warehouse (autoescape); only a
formatter's own `Markup` is written as markup."""

from __future__ import annotations

from kubeledger.report.render import TEMPLATES, Column, _code


def test_table_cells_are_escaped_and_markup_formatters_are_kept():
    table = TEMPLATES.get_template("macros.html.j2").module.table
    html = str(
        table(
            [{"team": "<script>alert(1)</script>", "id": "i-0<&>"}],
            [Column("team", "Team <1>"), Column("id", "ID", _code, "id")],
            footer={"team": "All & more"},
        )
    )
    assert "<script>" not in html
    assert '<td class="">&lt;script&gt;alert(1)&lt;/script&gt;</td>' in html
    assert '<td class="id"><code>i-0&lt;&amp;&gt;</code></td>' in html
    assert '<th class="">Team &lt;1&gt;</th>' in html
    assert '<tfoot><tr><td class="">All &amp; more</td>' in html
