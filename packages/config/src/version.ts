// The release version lives in one place, the root package.json; everything that prints it imports it here.
import rootPackage from "../../../package.json" with { type: "json" };

export const version: string = rootPackage.version;
