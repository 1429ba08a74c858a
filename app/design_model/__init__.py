"""The design-model server: a simulated Revit document and Rhino session over JSON-RPC 2.0.

``rpc.handle`` is the one dispatcher; ``bin/model-server`` serves it standalone on loopback
and ``web`` mounts it in the app at ``/design-model/rpc`` (token required). Method modules:
``revit_methods`` and ``rebar`` (Revit side), ``rhino_methods`` (Rhino side, seed 001).
"""
