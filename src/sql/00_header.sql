-- minhash extension script, assembled from src/sql/*.sql by the Makefile.

\echo Use "CREATE EXTENSION minhash" to load this file. \quit
