"""pgminhash.django: MinhashField, the similar lookup, JaccardDistance,
Jaccard, Minhash and LshIndex (Django 3.2 as Debian ships it, over psycopg2)."""
import os

import pytest

import pgminhash
from pgminhash import Signature

from . import similar_docs


@pytest.fixture(scope="module")
def django_db(dbname):
    import django
    from django.conf import settings

    settings.configure(
        DATABASES={"default": {
            "ENGINE": "django.db.backends.postgresql", "NAME": dbname,
            "HOST": os.environ["PGHOST"], "PORT": os.environ["PGPORT"],
            "USER": os.environ.get("PGUSER", "")}},
        INSTALLED_APPS=[], USE_TZ=True)
    django.setup()
    from django.db import connection, models

    from pgminhash.django import LshIndex, Minhash, MinhashField

    class Doc(models.Model):
        body = models.TextField()
        sig = MinhashField(num_perm=128, null=True)

        class Meta:
            app_label = "pgminhash_tests"
            db_table = "dj_docs"
            indexes = [LshIndex(fields=["sig"], name="dj_docs_lsh", threshold=0.5,
                                fastupdate=False),
                       LshIndex(Minhash("body", unit="char", k=4, num_perm=64),
                                name="dj_docs_chars_lsh")]

    with connection.schema_editor() as editor:
        editor.create_model(Doc)
    with connection.cursor() as cur:
        cur.execute("SET enable_seqscan = off")
    yield Doc
    with connection.schema_editor() as editor:
        editor.delete_model(Doc)


def test_ddl(django_db):
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                    " WHERE attrelid = 'dj_docs'::regclass AND attname = 'sig'")
        assert cur.fetchone()[0] == "minhash(128)"
        cur.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'dj_docs'"
                    " AND indexdef LIKE '%%USING lsh%%' ORDER BY 1")
        rows = cur.fetchall()
    assert rows == [
        ("dj_docs_chars_lsh", "CREATE INDEX dj_docs_chars_lsh ON public.dj_docs USING lsh"
                              " (minhash(body, unit => 'char'::text, k => 4, num_perm => 64))"),
        ("dj_docs_lsh", "CREATE INDEX dj_docs_lsh ON public.dj_docs USING lsh (sig)"
                        " WITH (threshold='0.5', fastupdate=off)")]


def test_round_trip_similar_and_nearest(django_db):
    from pgminhash.django import Jaccard, JaccardDistance, Minhash

    Doc = django_db
    sigs = similar_docs.signatures()
    Doc.objects.bulk_create([Doc(id=i, body=b, sig=sigs[i]) for i, b in similar_docs.documents()])
    stored = {d.id: d.sig for d in Doc.objects.all()}
    assert stored == sigs and all(isinstance(s, Signature) for s in stored.values())
    server = {d.id: d.server for d in Doc.objects.annotate(server=Minhash("body"))}
    assert server == sigs

    q = pgminhash.minhash(dict(similar_docs.documents())[88])
    similar = Doc.objects.filter(sig__similar=q)
    assert "dj_docs_lsh" in similar.explain()
    assert set(similar.values_list("id", flat=True)) == similar_docs.similar_to(sigs, q) == {
        88, 89, 90}
    nearest = Doc.objects.annotate(d=JaccardDistance("sig", q)).order_by("d")[:3]
    assert "dj_docs_lsh" in nearest.explain()
    assert sorted((d.d, d.id) for d in nearest) == similar_docs.nearest(sigs, q, 3)
    assert Doc.objects.annotate(j=Jaccard("sig", q)).get(id=89).j == sigs[89].jaccard(q)
    assert Doc.objects.get(sig=sigs[5]).id == 5

    # signed in the server, with its named arguments
    body = dict(similar_docs.documents())[1]
    Doc.objects.filter(id=1).update(sig=Minhash("body", unit="char", k=3))
    assert Doc.objects.get(id=1).sig == pgminhash.minhash(body, unit="char", k=3)
    datasketch = Doc.objects.annotate(ds=Minhash("body", family="datasketch", seed=7)).get(id=1)
    assert datasketch.ds == pgminhash.minhash(body, family="datasketch", seed=7)
    Doc.objects.filter(id=2).update(sig=None)
    assert Doc.objects.get(id=2).sig is None
    # bits and ignore passed to the server's minhash()
    compact = Doc.objects.annotate(c=Minhash("body", bits=16, family="oph",
                                             ignore="accents, punctuation")).get(id=1)
    assert compact.c == pgminhash.minhash(body, bits=16, family="oph",
                                          ignore="accents, punctuation")
    assert compact.c.bits == 16
    # config (the server's text search) is passed too, and an unknown or
    # misspelled keyword is refused rather than dropped
    from django.db import connection
    english = Doc.objects.annotate(e=Minhash("body", config="english", num_perm=16)).get(id=1)
    with connection.cursor() as cur:
        cur.execute("SELECT minhash(body, config => 'english', num_perm => 16)::text"
                    " FROM dj_docs WHERE id = 1")
        assert str(english.e) == cur.fetchone()[0]
    assert english.e != pgminhash.minhash(body, num_perm=16)
    with pytest.raises(TypeError, match="num_perms"):
        Minhash("body", num_perms=16)


def test_field_conversions(django_db):
    from pgminhash.django import LshIndex, MinhashField

    field = MinhashField(num_perm=16)
    sig = pgminhash.minhash("x", num_perm=16)
    assert field.to_python(str(sig)) == sig
    assert field.get_prep_value(sig) == str(sig)
    assert field.deconstruct()[3] == {"num_perm": 16}
    compact = MinhashField(num_perm=16, bits=8)
    assert compact.deconstruct()[3] == {"num_perm": 16, "bits": 8}
    assert compact.db_type(None) == "minhash(16,8)"
    small = pgminhash.minhash("x", num_perm=16, bits=8)
    assert compact.to_python(str(small)) == small
    # bad input is a ValidationError, which forms and full_clean() report
    from django.core.exceptions import ValidationError
    for bad in ("not a signature", 5):
        with pytest.raises(ValidationError) as refused:
            field.clean(bad, None)
        assert refused.value.code == "invalid"
    with pytest.raises(ValidationError, match="invalid input syntax for type minhash"):
        field.to_python("not a signature")
    assert field.clean(str(sig), None) == sig
    index = LshIndex(fields=["sig"], name="i", bands=16, rows=8)
    assert index.deconstruct()[2]["bands"] == 16
    assert index.get_with_params() == ["bands = 16", "rows = 8"]
