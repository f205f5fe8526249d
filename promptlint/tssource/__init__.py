"""Prompt-building TypeScript and JavaScript: the same request model as Python, another front end.

One job per module:

- ``grammar``: tree-sitter's TypeScript/TSX/JavaScript grammars, loaded on first use, and the
  location of the first syntax error;
- ``names``: SDK calls that send a request, volatile and per-process values, unordered sources;
- ``index``: one pass over a module: scopes, bindings, mutations, returns, calls, imports, exports;
- ``flow``: the evaluator: a TS/JS expression -> the ``pysource.flow.Val`` the Python front end
  produces (text parts and holes, items, mappings, hazards), across functions and the linted
  modules a file imports (``project``);
- ``instances``: objects of the linted modules' classes, carried through the method calls made on
  them (fluent builders, getters, fields written by constructors and methods, ``super(...)``);
- ``closures``: function values with the bindings they close over (prompt factories, object
  literals of methods, agents' ``instructions`` functions);
- ``branches``: assignments in exclusive branches (``switch`` cases, ``if``/``else``), each a value;
- ``requests``: each SDK call's request as a ``pysource.layout.Layout``, judged by the Python
  analyzer's own request rules (``pysource.rules.HazardScan``): no rule is written twice.

Nodes of findings are ``Span`` objects with the attributes of a Python ``ast`` node (1-based
lines, UTF-8 byte columns), so records, suppressions and measurements are shared too.
"""
