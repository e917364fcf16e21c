// Preloaded (`node --import`) into a stage under test: watches the stage's own stdout from inside.
// It says `full` on stderr the first time a write is refused (the stream asks the writer to wait
// for 'drain'), counts every write made while that wait is owed, and reports the count at exit.
let full = false;
let owed = false;
let early = 0;
const write = process.stdout.write.bind(process.stdout);
process.stdout.on('drain', () => {
  owed = false;
});
process.stdout.write = (chunk, ...rest) => {
  if (owed) early += 1;
  const accepted = write(chunk, ...rest);
  if (!accepted) {
    owed = true;
    if (!full) {
      full = true;
      process.stderr.write('full\n');
    }
  }
  return accepted;
};
process.on('exit', () => {
  process.stderr.write(`writes-before-drain=${early}\n`);
});
