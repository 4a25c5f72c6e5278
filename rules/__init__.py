"""cudalint's rules: one module per rule, named `cudaNNN_<rule_name>`, each defining `RULE`.

The module docstring is the rule's documentation (shown by `cudalint rule CODE`, on hover and in
SARIF); it has the sections `## Why`, `## Example` (code that fires), `## Use instead` (code
that does not) and `## References`.
"""
