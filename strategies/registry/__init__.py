"""The registry and the plugin interface: what ``from strategies import ...`` gives.

- ``catalog``: ``Strategy``, ``StrategySpec``, ``register`` (the decorator every strategy
  module uses) and ``register_spec_parser``;
- ``plugins``: the built-in modules and plugins (``--plugin``, ``SNIFF_PLUGINS``), loaded on
  the first look-up (``available``, ``get``);
- ``specs``: ``name:key=value`` and ``name:@best.json`` into specs, lineups.

May import: ``sim.errors``. It imports no strategy module by name in its code (the built-ins
are loaded by their names at run time), so every other room may import it.
"""

__all__ = ["catalog", "plugins", "specs"]
