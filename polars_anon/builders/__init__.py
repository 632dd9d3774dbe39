"""Hierarchy builders: each turns values into plain ARX rows, one per leaf.

A row is ``[leaf, level1, ..., root]`` of String labels, the leaf being the
value's String cast (the label the anonymization pipeline matches). A label
repeated on consecutive positions is one node (ARX's ``f;f;*``). Only
:mod:`polars_anon.hierarchy` turns rows into :class:`~polars_anon.Hierarchy`
objects, so no builder imports it (no import loop).

Modules, one concept each: :mod:`~polars_anon.builders.values` (coercion shared
by all), :mod:`~polars_anon.builders.bands` (integer intervals with top and bottom
coding), :mod:`~polars_anon.builders.masks` (prefix masking),
:mod:`~polars_anon.builders.dates` (calendar levels),
:mod:`~polars_anon.builders.groups` (runs of sorted values of given sizes),
:mod:`~polars_anon.builders.expressions` (a Polars expression per level),
:mod:`~polars_anon.builders.random_trees` (random trees of paper 003).
"""
