"""One module per inventory source (a resource kind, or an endpoint's kinds), named after what it lists;
:func:`chipwise.collect.inventory.registry.inventory_sources` loads every module here."""
