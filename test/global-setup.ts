// Placeholder: replaced by the harness (starts or finds a ZooKeeper and provides its connect string).
export default function setup(): void {}
