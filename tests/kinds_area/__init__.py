"""An area used to test store copies between dialects: every kind of column the two
dialects store differently (generated ids, booleans, bytes, a composite key, a table
without a key), and a table renamed by a later migration."""

from loomdb.store.areas import Area

KINDS = Area("kinds", "kinds_area")
