/**
 * The waker's and the supervisor's sections of docs/api.md against the routes they mount: the
 * waker's route table, and the supervisor's one status path. A control takes a row out.
 */
import { SUPERVISOR_PATHS } from '@persona-browser/contracts';
import { ROUTES } from '../src/api/app';
import { readApiDoc, sectionRoutes, withoutRow } from '@persona-browser/testkit/api-doc';

const WAKER = "The waker's API";
const SUPERVISOR = "The supervisor's API";

/** The waker's mounted routes as the page writes them (`{name}` for `:name`). */
const wakerRoutes = (): string[] =>
  ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`).sort();

const doc = readApiDoc();

describe("docs/api.md's fleet sections", () => {
  test("the waker's section lists exactly the waker's routes", () => {
    expect(ROUTES.length).toBeGreaterThan(5);
    expect(sectionRoutes(doc, WAKER).sort()).toEqual(wakerRoutes());
  });

  test("the supervisor's section lists its status route", () => {
    expect(sectionRoutes(doc, SUPERVISOR)).toEqual([`GET ${SUPERVISOR_PATHS.status}`]);
  });

  test('a waker route the page leaves out shows (control)', () => {
    const missing = withoutRow(doc, 'POST /api/personas/{name}/sleep');
    const listed = sectionRoutes(missing, WAKER).sort();
    expect(wakerRoutes().filter((r) => !listed.includes(r))).toEqual([
      'POST /api/personas/{name}/sleep',
    ]);
  });
});
