/*
 * amvalidate for lsh operator classes: strategy 1 is a boolean search
 * operator (%), strategy 2 an ORDER BY operator (<%>) returning float8 sorted
 * by a btree family; both take the opclass's type on each side. Strategy 3,
 * optional, is a boolean search operator (%>=) from the opclass's type to
 * any type (minhash_query: a signature and a threshold). lsh has no support
 * functions.
 *
 * An operator class with no members at all is a placeholder: the extension
 * declares one as the default for text and one for anyarray so that
 * CREATE INDEX ... USING lsh (body) reaches ambuild, which explains that the
 * index takes minhash(body) (lsh_require_signatures). Without a default
 * operator class PostgreSQL stops at "data type text has no default operator
 * class", before the access method is asked, and no hook of an index access
 * method runs earlier.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

extern "C" {
#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_am.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
}

static char *
opfamily_name(Oid opfamilyoid, Oid *method)
{
	HeapTuple	tup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(opfamilyoid));
	Form_pg_opfamily form;
	char	   *name;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator family %u", opfamilyoid);
	form = (Form_pg_opfamily) GETSTRUCT(tup);
	name = pstrdup(NameStr(form->opfname));
	if (method)
		*method = form->opfmethod;
	ReleaseSysCache(tup);
	return name;
}

static bool
opfamily_is_btree(Oid opfamilyoid)
{
	Oid			method;

	(void) opfamily_name(opfamilyoid, &method);
	return method == BTREE_AM_OID;
}

/* one finding, as the other access methods' validators report them */
static void
report(const char *msg)
{
	ereport(INFO,
			(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
			 errmsg("%s", msg)));
}

bool
lshvalidate(Oid opclassoid)
{
	bool		ok = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	char	   *opfamilyname;
	CatCList   *oprlist;
	CatCList   *proclist;
	bool		have[LSH_NSTRATEGIES + 1] = {false};

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = pstrdup(NameStr(classform->opcname));
	opfamilyname = opfamily_name(opfamilyoid, NULL);

	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));
	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	if (proclist->n_members == 0 && oprlist->n_members == 0)
	{
		/* a placeholder (above): valid as it is */
		ReleaseCatCacheList(oprlist);
		ReleaseCatCacheList(proclist);
		ReleaseSysCache(classtup);
		return true;
	}
	for (int i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform = (Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		report(psprintf("lsh opfamily %s contains support function %s, but lsh has no support functions",
						opfamilyname, format_procedure(procform->amproc)));
		ok = false;
	}

	for (int i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);
		const char *oprname = format_operator(oprform->amopopr);
		int			strategy = oprform->amopstrategy;

		if (strategy < 1 || strategy > LSH_NSTRATEGIES)
		{
			report(psprintf("lsh opfamily %s contains operator %s with invalid strategy number %d",
							opfamilyname, oprname, strategy));
			ok = false;
			continue;
		}
		/* %>= compares a signature with a minhash_query (signature, threshold) */
		if (oprform->amoplefttype != oprform->amoprighttype &&
			!(strategy == LSH_SIMILAR_T_STRATEGY && oprform->amoplefttype == opcintype))
		{
			report(psprintf("lsh opfamily %s contains cross-type operator %s",
							opfamilyname, oprname));
			ok = false;
		}
		if (strategy == LSH_SIMILAR_STRATEGY || strategy == LSH_SIMILAR_T_STRATEGY)
		{
			if (oprform->amoppurpose != AMOP_SEARCH || OidIsValid(oprform->amopsortfamily))
			{
				report(psprintf("lsh opfamily %s contains operator %s with strategy %d, which must be a search operator",
								opfamilyname, oprname, strategy));
				ok = false;
			}
			if (!check_amop_signature(oprform->amopopr, BOOLOID,
									  oprform->amoplefttype, oprform->amoprighttype))
			{
				report(psprintf("lsh opfamily %s contains operator %s with wrong signature for strategy %d",
								opfamilyname, oprname, strategy));
				ok = false;
			}
		}
		else
		{
			if (oprform->amoppurpose != AMOP_ORDER || !OidIsValid(oprform->amopsortfamily) ||
				!opfamily_is_btree(oprform->amopsortfamily))
			{
				report(psprintf("lsh opfamily %s contains operator %s with strategy %d, which must be an ORDER BY operator with a btree sort family",
								opfamilyname, oprname, strategy));
				ok = false;
			}
			if (!check_amop_signature(oprform->amopopr, FLOAT8OID,
									  oprform->amoplefttype, oprform->amoprighttype))
			{
				report(psprintf("lsh opfamily %s contains operator %s with wrong signature for strategy %d",
								opfamilyname, oprname, strategy));
				ok = false;
			}
		}
		if (oprform->amoplefttype == opcintype &&
			(oprform->amoprighttype == opcintype || strategy == LSH_SIMILAR_T_STRATEGY))
			have[strategy] = true;
	}

	/* strategy 3 (%>=) is optional: an opclass works without it */
	for (int s = 1; s <= LSH_DISTANCE_STRATEGY; s++)
	{
		if (!have[s])
		{
			report(psprintf("lsh opclass %s is missing an operator for strategy %d",
							opclassname, s));
			ok = false;
		}
	}

	ReleaseCatCacheList(oprlist);
	ReleaseCatCacheList(proclist);
	ReleaseSysCache(classtup);
	return ok;
}

/*
 * ambuild's first step: an index whose operator class has no % operator (the
 * placeholders for text and arrays) cannot answer anything. Say what to
 * index instead, naming the column.
 */
void
lsh_require_signatures(Relation heap, Relation index, const struct IndexInfo *indexInfo)
{
	Oid			opcintype = index->rd_opcintype[0];
	AttrNumber	attnum = indexInfo->ii_IndexAttrNumbers[0];
	Oid			type;
	const char *what;

	if (OidIsValid(get_opfamily_member(index->rd_opfamily[0], opcintype, opcintype,
									   LSH_SIMILAR_STRATEGY)))
		return;
	if (attnum > 0)
	{
		type = TupleDescAttr(RelationGetDescr(heap), attnum - 1)->atttypid;
		what = quote_identifier(get_attname(RelationGetRelid(heap), attnum, false));
	}
	else
	{
		Node	   *expr = (Node *) linitial(indexInfo->ii_Expressions);

		type = exprType(expr);
		what = deparse_expression(expr,
								  deparse_context_for(RelationGetRelationName(heap),
													  RelationGetRelid(heap)),
								  false, false);
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("lsh indexes minhash signatures, not type %s", format_type_be(type)),
			 errhint("Index the signature: CREATE INDEX ... USING lsh (minhash(%s)), and query it with minhash(%s) %% minhash(...).",
					 what, what)));
}
