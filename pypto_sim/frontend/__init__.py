"""The kernel frontend: @pto.kernel, the builtins derived from the ISA, and the AST -> IR compiler."""
