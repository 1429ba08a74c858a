"""Every design-model method, registered in ``registry`` by importing the modules that declare
them (Revit side: ``revit_methods``, ``rebar``; Rhino side: ``rhino_methods``). The dispatcher
(``rpc``), the catalog (``catalog``) and the package's public functions import this module, so
none of them needs another to fill ``registry.SPECS``."""

from app.design_model import rebar, revit_methods, rhino_methods  # noqa: F401  (they register)
