"""The diagrams generated from the spec (``kcspec diagrams``), committed and shipped with the package as data
(``kcspec.diagrams``), so that ``kcspec verify`` checks them wherever kcspec is installed. No code lives here."""
