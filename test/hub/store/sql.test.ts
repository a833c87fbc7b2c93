import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { quoteIdent, toSqliteParams } from '../../../src/hub/store/sql.ts';

test('$n becomes ?n in plain SQL', () => {
  assert.is(toSqliteParams('SELECT * FROM t WHERE a = $1 AND b = $12'), 'SELECT * FROM t WHERE a = ?1 AND b = ?12');
  assert.is(toSqliteParams('VALUES ($1,$2)'), 'VALUES (?1,?2)');
});

test('literals, quoted identifiers and comments keep their $n', () => {
  assert.is(toSqliteParams("SELECT '$1', 'it''s $2', $3"), "SELECT '$1', 'it''s $2', ?3");
  assert.is(toSqliteParams('SELECT "col$1", $1'), 'SELECT "col$1", ?1');
  assert.is(toSqliteParams('SELECT 1 -- costs $1\n, $2'), 'SELECT 1 -- costs $1\n, ?2');
  assert.is(toSqliteParams('SELECT /* $1 */ $2'), 'SELECT /* $1 */ ?2');
});

test('a $ inside a name or without digits is left alone; unterminated input does not throw', () => {
  assert.is(toSqliteParams('SELECT a$1, $x, $'), 'SELECT a$1, $x, $');
  assert.is(toSqliteParams("SELECT 'open $1"), "SELECT 'open $1");
  assert.is(toSqliteParams('SELECT /* open $1'), 'SELECT /* open $1');
});

test('identifiers from the catalogue are quoted with inner quotes doubled', () => {
  assert.is(quoteIdent('api_keys'), '"api_keys"');
  assert.is(quoteIdent('we"ird'), '"we""ird"');
});

test.run();
