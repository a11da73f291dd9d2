"""Django (3.2 and later, PostgreSQL backend): a field, lookups, functions
and an lsh index.

    from pgminhash.django import (JaccardDistance, LshIndex, Minhash,
                                  MinhashExtension, MinhashField)

    class Doc(models.Model):
        body = models.TextField()
        sig = MinhashField(num_perm=128)
        class Meta:
            indexes = [LshIndex(fields=["sig"], name="doc_sig_lsh", threshold=0.5)]

    q = pgminhash.minhash(body)
    Doc.objects.filter(sig__similar=q)                           # sig % q
    Doc.objects.order_by(JaccardDistance("sig", q))[:10]          # sig <%> q
    Doc.objects.update(sig=Minhash("body"))                      # signed in the server

A migration enables the extension with MinhashExtension().
"""
from django.contrib.postgres.indexes import PostgresIndex
from django.contrib.postgres.operations import CreateExtension
from django.core.exceptions import ValidationError
from django.db.models import Field, FloatField, Func, Lookup, Value

from ._options import type_name
from .signature import Signature

__all__ = ["MinhashField", "Similar", "Minhash", "Jaccard", "JaccardDistance", "LshIndex",
           "MinhashExtension"]


def _to_signature(value):
    if value is None or isinstance(value, Signature):
        return value
    if isinstance(value, str):
        return Signature.from_text(value)
    raise TypeError(f"a minhash value is a Signature, not {type(value).__name__}")


class MinhashField(Field):
    """A minhash column; num_perm=k makes it minhash(k), and bits=16 (or 8)
    minhash(k, 16): compact signatures."""

    description = "MinHash signature"
    empty_strings_allowed = False

    def __init__(self, *args, num_perm=None, bits=None, **kwargs):
        self.num_perm = num_perm
        self.bits = bits
        self._type = type_name(num_perm, bits)
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if self.num_perm is not None:
            kwargs["num_perm"] = self.num_perm
        if self.bits is not None:
            kwargs["bits"] = self.bits
        return name, path, args, kwargs

    def db_type(self, connection):
        return self._type

    def from_db_value(self, value, expression, connection):
        return _to_signature(value)

    def to_python(self, value):
        # Field.clean() (forms, full_clean) expects ValidationError for bad input
        try:
            return _to_signature(value)
        except (TypeError, ValueError) as e:
            raise ValidationError(str(e), code="invalid") from e

    def get_prep_value(self, value):
        value = _to_signature(value)
        return None if value is None else str(value)

    def value_to_string(self, obj):
        value = self.value_from_object(obj)
        return "" if value is None else str(value)


def _signature_sql(compiler, connection, side, sql):
    # a plain value arrives as its text form: give it the type
    return sql if hasattr(side, "as_sql") else "(%s)::minhash" % sql


@MinhashField.register_lookup
class Similar(Lookup):
    """sig__similar=q: sig % q, estimated Jaccard similarity at least
    minhash.similarity_threshold (an lsh index scan)."""

    lookup_name = "similar"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        rhs = _signature_sql(compiler, connection, self.rhs, rhs)
        # %% is %: the backend formats the query with its parameters
        return "%s %%%% %s" % (lhs, rhs), lhs_params + rhs_params


def _signature_value(sig):
    if hasattr(sig, "resolve_expression"):
        return sig
    return Func(Value(str(_to_signature(sig))), function="", template="(%(expressions)s)::minhash",
                output_field=MinhashField())


class JaccardDistance(Func):
    """sig <%> q: 1 - estimated Jaccard, for order_by(...)[:n] (an lsh index scan)."""

    function = ""
    arg_joiner = " <%%> "
    output_field = FloatField()

    def __init__(self, expression, sig, **extra):
        super().__init__(expression, _signature_value(sig), **extra)


class Jaccard(Func):
    """jaccard(sig, q): the estimated Jaccard similarity."""

    function = "jaccard"
    output_field = FloatField()

    def __init__(self, expression, sig, **extra):
        super().__init__(expression, _signature_value(sig), **extra)


class Minhash(Func):
    """minhash(expression, unit => ..., k => ..., ...): the signature computed
    by the server, with the SQL function's named arguments (None: its
    default), config (a text search configuration's name) among them."""

    function = "minhash"

    def __init__(self, expression, *, unit=None, k=None, num_perm=None, seed=None, family=None,
                 bits=None, ignore=None, config=None, output_field=None):
        # no **extra: Func would keep a misspelled or unknown keyword
        # (num_perms=64) as a template value and sign with the defaults
        self.named = {name: value for name, value in (
            ("config", config), ("ignore", ignore), ("bits", bits), ("family", family),
            ("unit", unit), ("k", k), ("num_perm", num_perm), ("seed", seed))
            if value is not None}
        if output_field is None:
            # the typmod when num_perm is known (bits alone names no type)
            output_field = MinhashField(num_perm=num_perm,
                                        bits=bits if num_perm is not None else None)
        super().__init__(expression, output_field=output_field)

    def as_sql(self, compiler, connection, **extra_context):
        sql, params = compiler.compile(self.source_expressions[0])
        args = ["(%s)::text" % sql]
        params = list(params)
        for name, value in self.named.items():
            args.append("%s => %%s" % name)
            params.append(value)
        return "minhash(%s)" % ", ".join(args), params


class LshIndex(PostgresIndex):
    """An lsh index; keyword options as the index's (docs/lsh.md)."""

    suffix = "lsh"
    options = ("threshold", "bands", "rows", "fp_weight", "fn_weight", "fastupdate",
               "pending_list_limit", "fillfactor")

    def __init__(self, *expressions, threshold=None, bands=None, rows=None, fp_weight=None,
                 fn_weight=None, fastupdate=None, pending_list_limit=None, fillfactor=None,
                 **kwargs):
        self.with_options = {name: value for name, value in (
            ("threshold", threshold), ("bands", bands), ("rows", rows), ("fp_weight", fp_weight),
            ("fn_weight", fn_weight), ("fastupdate", fastupdate),
            ("pending_list_limit", pending_list_limit), ("fillfactor", fillfactor))
            if value is not None}
        super().__init__(*expressions, **kwargs)

    def deconstruct(self):
        path, args, kwargs = super().deconstruct()
        kwargs.update(self.with_options)
        return path, args, kwargs

    def get_with_params(self):
        return ["%s = %s" % (name, ("on" if value else "off") if isinstance(value, bool)
                             else float(value) if name in ("threshold", "fp_weight", "fn_weight")
                             else int(value))
                for name, value in self.with_options.items()]


class MinhashExtension(CreateExtension):
    """CREATE EXTENSION minhash, as a migration operation."""

    def __init__(self):
        self.name = "minhash"
