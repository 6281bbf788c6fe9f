/**
 * Which `count` of `members` a starving thread sheds: one at a time, the newest of the group
 * (a channel's audience) with the most left. The largest audience gives first: while a crowd on
 * one channel saturates the thread, a small channel's viewers (most often another tenant's) keep
 * their stream, and within a channel those who watched longest keep theirs.
 */
export function toShed<T>(
  members: Iterable<T>,
  count: number,
  groupOf: (member: T) => string,
  admittedAt: (member: T) => number,
): T[] {
  const groups = new Map<string, T[]>();
  for (const member of members) {
    const key = groupOf(member);
    const group = groups.get(key);
    if (group) group.push(member);
    else groups.set(key, [member]);
  }
  // Oldest first: each group's newest is its last.
  for (const group of groups.values()) group.sort((a, b) => admittedAt(a) - admittedAt(b));
  const shed: T[] = [];
  while (shed.length < count) {
    let largest: T[] | undefined;
    for (const group of groups.values()) if (group.length > (largest?.length ?? 0)) largest = group;
    if (!largest) break;
    shed.push(largest.pop()!);
  }
  return shed;
}
