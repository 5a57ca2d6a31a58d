/**
 * Human input on a page the caller already holds: the same planned, trusted input the REST
 * primitives send. Gestures never take the page's lock, bring it to the front or pause for
 * slowmo; whoever holds the page (a primitive route, a plugin) does that once around them.
 */

export interface Point {
  x: number;
  y: number;
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** `check-visible` (docs/api.md, Primitives): where an element is and how much of it is seen. */
export interface Visibility {
  found: boolean;
  visible: boolean;
  fully_visible: boolean;
  bounding_box: Box | null;
  intersection: Box | null;
  viewport: { width: number; height: number };
}

export interface PageGestures {
  /** Curved, Fitts-timed approach to a point spread around the visible part, then a click. */
  click(selector: string): Promise<{ selector: string; position: Point }>;
  clickAt(at: Point): Promise<{ position: Point }>;
  hover(selector: string): Promise<{ selector: string; position: Point }>;
  hoverAt(at: Point): Promise<{ position: Point }>;
  checkVisible(selector: string): Promise<Visibility>;
  /** Wheel notches where the pointer is; negative scrolls up. */
  scroll(distance: number): Promise<{ scrolled_distance: number }>;
  /** Key by key with corrected typos; the focused field ends up holding exactly `text`. */
  type(text: string): Promise<{ text_length: number; chars_typed: number; typos_made: number }>;
  paste(text: string): Promise<{ text_length: number; fumbled: boolean; delay_before_ms: number }>;
  /** Ctrl+A in the focused field: what is typed or pasted next replaces its text. */
  selectAll(): Promise<{ key: string }>;
  pressEnter(): Promise<{ key: string }>;
  pressTab(withShift: boolean): Promise<{ key: string }>;
  /** Escape: closes a dialog, menu or viewer as a person would. */
  pressEscape(): Promise<{ key: string }>;
  /** F5: a full reload. */
  reload(): Promise<{ key: string; status_code: number | null }>;
  zoom(at: Point, level: number): Promise<{ zoom_level: number; position: Point }>;
  resetZoom(): Promise<{ zoom_level: number }>;
}
