"""Import statements recognised at a row, across languages and over several lines."""

from __future__ import annotations

import pytest

from daemon.intel.import_lines import in_import_statement

CASES = {
    "ts": 'import { Cart, priceWithTax } from "./cart";\n\nexport function f() {\n  return priceWithTax(1, 2);\n}',
    "ts_multi": 'import {\n  Cart,\n  priceWithTax,\n} from "./cart";\nconst x = priceWithTax(1, 2);',
    "reexport": 'export { priceWithTax } from "./cart";\nexport const y = 1;',
    "cjs": 'const { readFile } = require("fs");\nreadFile("a");',
    "py": "from .cart import (\n    Cart,\n    price_with_tax,\n)\n\nprice_with_tax(1, 2)",
    "py_plain": "import os.path\nos.path.join('a')",
    "c": '#include "cart.h"\nint main(void) { return price(); }',
    "rust": "use crate::cart::price;\nfn main() { price(); }",
    "java": "import shop.Cart;\nclass A { Cart c; }",
}


@pytest.mark.parametrize(
    ("case", "row", "expected"),
    [
        ("ts", 0, True),
        ("ts", 3, False),
        ("ts_multi", 2, True),
        ("ts_multi", 4, False),
        ("reexport", 0, True),
        ("reexport", 1, False),
        ("cjs", 0, True),
        ("cjs", 1, False),
        ("py", 2, True),
        ("py", 5, False),
        ("py_plain", 0, True),
        ("py_plain", 1, False),
        ("c", 0, True),
        ("c", 1, False),
        ("rust", 0, True),
        ("java", 0, True),
        ("java", 1, False),
        ("ts", 99, False),
    ],
)
def test_rows_inside_and_outside_imports(case: str, row: int, expected: bool) -> None:
    assert in_import_statement(CASES[case].splitlines(), row) is expected
