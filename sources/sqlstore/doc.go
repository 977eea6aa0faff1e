// Package sqlstore is the SQL task queue: an embedded SQLite file (the
// default, pure Go) or a PostgreSQL table shared by a team. Both dialects
// read and steer a seed 003 `governance_tasks` table as it is, so agents
// running the seed's own SQL and claimdeck work on the same rows.
//
// Every claim is one conditional statement and every holder write names its
// lock token in the WHERE clause; all time comparisons use the database's
// clock. `Migrate` adds the lease columns, an audit table and triggers that
// version every row change, including the seed's own UPDATEs, so polls can
// be incremental. Each agent step and human action is a `claimdeck_audit`
// row written with the change itself: the task's timeline.
//
// Nothing outside this package knows the table's schema.
package sqlstore
