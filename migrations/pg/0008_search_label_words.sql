-- A contact's label is indexed as words the way SQLite's FTS5 tokenizer makes them: ASCII
-- punctuation and symbols separate words ("Dot.Com" is "Dot Com", "a@b.example" is "a b example"),
-- as message bodies already are (src/db/message-search-pg.ts, indexedText). PostgreSQL's text-search
-- parser kept such names whole, so a search for "com" or "example" missed them on PostgreSQL only.
CREATE OR REPLACE FUNCTION conversation_search_label(first_name text, last_name text, phone_number text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT regexp_replace(coalesce(first_name, '') || ' ' || coalesce(last_name, ''), '[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+', ' ', 'g')
    || ' ' || d || ' ' || substr(d, 2) || ' '
    || substr(d, 3) || ' ' || substr(d, 4) || ' ' || substr(d, 5) || ' ' || substr(d, 6) || ' ' || substr(d, 7)
    || ' ' || substr(d, 8) || ' ' || substr(d, 9) || ' ' || substr(d, 10) || ' ' || substr(d, 11)
  FROM (SELECT replace(replace(phone_number, '+', ''), ' ', '') AS d) AS digits;
$$;
--> statement-breakpoint
-- The labels already written, rewritten with the words.
UPDATE conversation_search cs
SET text = conversation_search_label(c.first_name, c.last_name, c.phone_number)
FROM conversations cv JOIN contacts c ON c.id = cv.contact_id
WHERE cs.conversation_id = cv.id AND cs.message_id IS NULL;
