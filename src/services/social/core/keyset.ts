/** A keyset position: the sort key (ISO time or other text) and id of the last row of the previous page. */
export interface Keyset {
  k: string;
  id: string;
}
