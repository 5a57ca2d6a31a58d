// Preloaded (`node --require`) into a process the test cannot wait for, such as a grandchild
// handed to init when its parent is killed: writes the code it exits with to PB_TEST_EXIT_FILE.
// A process killed by a signal writes nothing.
'use strict';

const fs = require('node:fs');

const file = process.env.PB_TEST_EXIT_FILE;
if (file) process.on('exit', (code) => fs.writeFileSync(file, String(code)));
