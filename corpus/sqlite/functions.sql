SELECT printf('%5.2f|%s|%x', 3.14159, 'abc', 255), substr('hello', 2, 3), upper('x'),
       hex(randomblob(4)) IS NOT NULL, json_extract('{"a":[1,2,{"b":3}]}', '$.a[2].b'),
       date('2024-02-29', '+1 year'), abs(-5), coalesce(NULL, 7), instr('banana', 'na'),
       replace('aaa', 'a', 'bb'), typeof(1.0), length(zeroblob(10)), round(2.5);
